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

export async function insertEmailRecord(db: Queryable, record: NewEmailRecord): Promise<void> {
  await db.query(
    `INSERT INTO email_records (id, form_id, submission_id, submission_stored, kind, recipients,
       subject, status, last_error, message, created_at, updated_at)
     VALUES ($1, $2, $3, $11, $4, $5, $6, $7, $8, $9::text::jsonb, $10, $10)`,
    [
      record.id,
      record.formId,
      record.submissionId,
      record.kind,
      record.to,
      record.subject,
      record.status,
      record.lastError,
      record.message && JSON.stringify(record.message),
      record.createdAt,
      record.submissionStored,
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

/** The email if it is still pending (gone with its submission, or final: null). */
export async function findPendingEmail(db: Queryable, id: string): Promise<PendingEmail | null> {
  const rows = await db.query<PendingEmail>(
    "SELECT attempts, message FROM email_records WHERE id = $1 AND status = 'pending'",
    [id],
  );
  return rows[0] ?? null;
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
