import type { Queryable } from "../db/database.ts";
import { countIntoSlots } from "../submissions/submission-counts.repository.ts";
import type { IntakeForm, NewSubmission } from "./intake.repository.ts";

/**
 * Stores and counts a submission in one statement (one round trip, its own transaction), only
 * while the form and its organization are as `form` was read: the same versions, neither closed
 * by hand nor past their deadline. For a form with no limit of responses, no notification and no
 * file: such a submission needs nothing else in its transaction. Resolves to false, having
 * written nothing, when the form changed since it was read (or is gone): the caller reads it
 * again and decides anew.
 */
export async function storeWhileFormUnchanged(
  db: Queryable,
  submission: NewSubmission,
  form: Pick<IntakeForm, "version" | "organizationVersion">,
  { store, count }: { store: boolean; count: boolean },
): Promise<boolean> {
  const rows = await db.query<{ admitted: number }>(
    `WITH form AS (
       SELECT forms.id AS form_id, forms.organization_id
         FROM forms JOIN organizations o ON o.id = forms.organization_id
        WHERE forms.id = $1 AND forms.xmin::text = $2 AND o.xmin::text = $3
          AND NOT forms.is_closed AND COALESCE(forms.auto_close_at > $4, true)
     ), stored AS (
       INSERT INTO submissions (id, form_id, organization_id, is_spam, spam_reason, answers,
         search_text, meta, created_at, updated_at, files)
       SELECT $5, form.form_id, form.organization_id, $6, $7, $8::text::jsonb, $9,
              $10::text::jsonb, $4, $4, '[]'::jsonb
         FROM form WHERE $11
     ), counted AS (
       ${countIntoSlots("(SELECT form_id FROM form WHERE $12) AS admitted")}
     )
     SELECT count(*)::int AS admitted FROM form`,
    [
      submission.formId,
      form.version,
      form.organizationVersion,
      submission.createdAt,
      submission.id,
      submission.isSpam,
      submission.spamReason,
      // Sent as JSON text: a bare array parameter would be read as a PostgreSQL array.
      JSON.stringify(submission.answers),
      submission.searchText,
      JSON.stringify(submission.meta),
      store,
      count,
    ],
  );
  return (rows[0]?.admitted ?? 0) > 0;
}
