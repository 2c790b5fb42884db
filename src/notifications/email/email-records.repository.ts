import type { Queryable } from "../../db/database.ts";

export type EmailKind = "owner" | "respondent";
export type EmailStatus = "pending" | "sent" | "failed" | "skipped";

/** What is handed to the SMTP server, kept until the email is final. */
export interface EmailMessage {
  from: { name: string; address: string };
  to: string[];
  replyTo: string | null;
  subject: string;
  html: string;
  text: string;
}

export interface NewEmailRecord {
  id: string;
  formId: string;
  submissionId: string;
  /** False for a `never` form's submission: no submission row will delete the record. */
  submissionStored: boolean;
  kind: EmailKind;
  to: string;
  subject: string;
  status: EmailStatus;
  lastError: string | null;
  message: EmailMessage | null;
  createdAt: Date;
}

/** An email as the emails route lists it. */
export interface EmailRecordRow {
  id: string;
  kind: EmailKind;
  to: string;
  subject: string;
  status: EmailStatus;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
}

/** The records in one statement. */
export async function insertEmailRecords(
  db: Queryable,
  records: readonly NewEmailRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `INSERT INTO email_records (id, form_id, submission_id, submission_stored, kind, recipients,
       subject, status, last_error, message, created_at, updated_at)
     SELECT e.id, e.form_id, e.submission_id, e.submission_stored, e.kind, e.recipients,
            e.subject, e.status, e.last_error, e.message, e.created_at, e.created_at
       FROM jsonb_to_recordset($1::text::jsonb) AS e(id text, form_id text, submission_id text,
            submission_stored boolean, kind text, recipients text, subject text, status text,
            last_error text, message jsonb, created_at timestamptz)`,
    [
      JSON.stringify(
        records.map((record) => ({
          id: record.id,
          form_id: record.formId,
          submission_id: record.submissionId,
          submission_stored: record.submissionStored,
          kind: record.kind,
          recipients: record.to,
          subject: record.subject,
          status: record.status,
          last_error: record.lastError,
          message: record.message,
          created_at: record.createdAt.toISOString(),
        })),
      ),
    ],
  );
}

/**
 * Deletes up to `limit` records of submissions never stored that are final and older than
 * `before`; rows another instance's pass has locked are skipped. Returns how many went.
 */
export async function deleteUnstoredEmailRecords(
  db: Queryable,
  before: Date,
  limit: number,
): Promise<number> {
  const rows = await db.query<{ deleted: number }>(
    `WITH doomed AS (
       SELECT id FROM email_records
        WHERE NOT submission_stored AND created_at < $1 AND status <> 'pending'
        LIMIT $2 FOR UPDATE SKIP LOCKED),
     gone AS (DELETE FROM email_records WHERE id IN (SELECT id FROM doomed) RETURNING 1)
     SELECT count(*)::int AS deleted FROM gone`,
    [before, limit],
  );
  return rows[0]?.deleted ?? 0;
}

/**
 * How many autoresponses of `formId` went, or are going, to `address` since `since`: the
 * ones refused by the cap do not count. The caller holds the address's lock (lockAutoresponses).
 */
export async function countAutoresponses(
  db: Queryable,
  formId: string,
  address: string,
  since: Date,
): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM email_records
      WHERE kind = 'respondent' AND form_id = $1 AND lower(recipients) = lower($2)
        AND created_at > $3 AND last_error IS DISTINCT FROM 'rate limited'`,
    [formId, address, since],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Until the transaction ends, other submissions to the same form and address wait here: the
 * count they read then includes this one, so concurrent submissions cannot pass the cap together.
 */
export async function lockAutoresponses(db: Queryable, formId: string, address: string) {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `autoresponse:${formId}:${address.toLowerCase()}`,
  ]);
}

/** The emails of one submission, oldest first. */
export async function listEmailRecords(
  db: Queryable,
  formId: string,
  submissionId: string,
): Promise<EmailRecordRow[]> {
  return db.query<EmailRecordRow>(
    `SELECT id, kind, recipients AS "to", subject, status, attempts, last_error AS "lastError",
            created_at AS "createdAt"
       FROM email_records WHERE submission_id = $1 AND form_id = $2
      ORDER BY created_at, kind, id`,
    [submissionId, formId],
  );
}

/** A pending email's next attempt: what to send and how many attempts it had. */
export interface PendingEmail {
  attempts: number;
  message: EmailMessage;
}

/** Each email still pending, by id (gone with its submission, or final: absent). */
export async function findPendingEmails(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, PendingEmail>> {
  const rows = await db.query<PendingEmail & { id: string }>(
    `SELECT id, attempts, message FROM email_records
      WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND status = 'pending'`,
    [JSON.stringify(ids)],
  );
  return new Map(rows.map(({ id, ...email }) => [id, email]));
}

/** An email sent: the attempt that followed `attemptsBefore` ones, and the recipients refused. */
export interface SentEmail {
  id: string;
  attemptsBefore: number;
  refused: string | null;
}

/**
 * Records the emails sent, in one statement, as recordAttempt does for one: an attempt recorded
 * already (a job run twice) is left as it is.
 */
export async function recordSentEmails(db: Queryable, sent: readonly SentEmail[]): Promise<void> {
  if (sent.length === 0) return;
  await db.query(
    `UPDATE email_records e
        SET attempts = e.attempts + 1, status = 'sent', last_error = s.refused,
            updated_at = now(), message = NULL
       FROM jsonb_to_recordset($1::text::jsonb) AS s(id text, attempts_before int, refused text)
      WHERE e.id = s.id AND e.attempts = s.attempts_before AND e.status = 'pending'`,
    [
      JSON.stringify(
        sent.map((email) => ({
          id: email.id,
          attempts_before: email.attemptsBefore,
          refused: email.refused,
        })),
      ),
    ],
  );
}

/**
 * Records the attempt that followed `attemptsBefore` ones; a final status drops the message.
 * False when that attempt was recorded already (a job run twice) or the email is gone.
 */
export async function recordAttempt(
  db: Queryable,
  id: string,
  attemptsBefore: number,
  status: EmailStatus,
  lastError: string | null,
): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE email_records
        SET attempts = attempts + 1, status = $3, last_error = $4, updated_at = now(),
            message = CASE WHEN $3 = 'pending' THEN message END
      WHERE id = $1 AND attempts = $2 AND status = 'pending'
      RETURNING id`,
    [id, attemptsBefore, status, lastError],
  );
  return rows.length > 0;
}
