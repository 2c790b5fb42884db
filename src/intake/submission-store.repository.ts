import type { Queryable } from "../db/database.ts";
import { fileEntries } from "../files/files.repository.ts";
import { READS_CLOSED } from "../forms/forms.repository.ts";
import { countIntoSlots } from "../submissions/submission-counts.repository.ts";
import type { IntakeForm, NewSubmission } from "./intake.repository.ts";

/**
 * The statements that store a submission and count it, one round trip each. Each stores only when
 * its form passes the statement's check, `form` below: the rows stored and counted come from it.
 * Parameters: $1 the submission's time (the `now` of READS_CLOSED), $2 the form, $3 to $11 the
 * submission, $12 on the check's own.
 */
const storedFrom = (form: string, more = "") => `WITH form AS (${form}),
  stored AS (
    INSERT INTO submissions (id, form_id, organization_id, is_spam, spam_reason, answers,
      search_text, meta, created_at, updated_at, files)
    SELECT $3, form.form_id, form.organization_id, $4, $5, $6::text::jsonb, $7, $8::text::jsonb,
           $1, $1, $11::text::jsonb
      FROM form WHERE $9
  ), counted AS (
    ${countIntoSlots("(SELECT form_id FROM form WHERE $10) AS admitted")}
  )${more}
  SELECT count(*)::int AS admitted FROM form`;

/** Whether the rows are to be stored (not for `never`) and counted (not spam). */
export interface StoreRules {
  store: boolean;
  count: boolean;
}

async function storeWhere(
  db: Queryable,
  sql: string,
  submission: NewSubmission,
  { store, count }: StoreRules,
  checkParams: unknown[],
): Promise<boolean> {
  const rows = await db.query<{ admitted: number }>(sql, [
    submission.createdAt,
    submission.formId,
    submission.id,
    submission.isSpam,
    submission.spamReason,
    // Sent as JSON text: a bare array parameter would be read as a PostgreSQL array.
    JSON.stringify(submission.answers),
    submission.searchText,
    JSON.stringify(submission.meta),
    store,
    count,
    JSON.stringify(fileEntries(submission.files)),
    ...checkParams,
  ]);
  return (rows[0]?.admitted ?? 0) > 0;
}

const WHILE_UNCHANGED = storedFrom(
  `SELECT forms.id AS form_id, forms.organization_id
     FROM forms JOIN organizations o ON o.id = forms.organization_id
    WHERE forms.id = $2 AND forms.revision = $12::bigint AND o.xmin::text = $13
      AND NOT forms.is_closed AND COALESCE(forms.auto_close_at > $1, true)`,
  // Its notifications, for the relay (src/notifications/event-relay.ts) to record and enqueue.
  `, announced AS (
     INSERT INTO submission_events_outbox (form_id, event, relay)
     SELECT form.form_id, $14::text::jsonb, $15 FROM form WHERE $14::text IS NOT NULL
   )`,
);

/**
 * Stores and counts the submission, in a statement that is its own transaction, only while the
 * form and its organization are as `form` was read (the same versions), neither closed by hand
 * nor past its deadline; with it, `event`, when there is one, goes into the outbox for `relay`.
 * Resolves to false, having written nothing, when the form changed since it was read (or is gone).
 */
export function storeWhileFormUnchanged(
  db: Queryable,
  submission: NewSubmission,
  form: Pick<IntakeForm, "version" | "organizationVersion">,
  rules: StoreRules,
  event: { json: string; relay: string } | null,
): Promise<boolean> {
  return storeWhere(db, WHILE_UNCHANGED, submission, rules, [
    form.version,
    form.organizationVersion,
    event?.json ?? null,
    event?.relay ?? null,
  ]);
}

const WHILE_OPEN = storedFrom(`
  SELECT forms.id AS form_id, forms.organization_id FROM forms
   WHERE forms.id = $2 AND NOT ${READS_CLOSED}`);

/**
 * Stores and counts the submission only while its form is open as of the statement's start, its
 * limit of responses included: in a transaction holding the form's lock, every submission
 * counted before is seen. Resolves to false, having written nothing, when it is closed or gone.
 */
export function storeWhileFormOpen(
  db: Queryable,
  submission: NewSubmission,
  rules: StoreRules,
): Promise<boolean> {
  return storeWhere(db, WHILE_OPEN, submission, rules, []);
}
