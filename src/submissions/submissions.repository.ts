import type { Queryable } from "../db/database.ts";
import type { FileEntry } from "../files/files.repository.ts";
import type { Answer } from "./answer.ts";
import { submissionSearchText } from "./search-text.ts";
import type { SPAM_REASONS } from "./submissions.schemas.ts";

export type SpamReason = (typeof SPAM_REASONS)[number];

export interface SubmissionMeta {
  ip: string | null;
  country: string | null;
  userAgent: string | null;
  referrer: string | null;
}

export interface SubmissionRow {
  id: string;
  formId: string;
  isSpam: boolean;
  spamReason: SpamReason | null;
  answers: Answer[];
  files: FileEntry[];
  meta: SubmissionMeta;
  createdAt: Date;
  updatedAt: Date;
}

export const SUBMISSION_COLUMNS = `s.id, s.form_id AS "formId", s.is_spam AS "isSpam",
  s.spam_reason AS "spamReason", s.answers, s.files, s.meta, s.created_at AS "createdAt",
  s.updated_at AS "updatedAt"`;

export type NewSubmission = Omit<SubmissionRow, "files"> & { organizationId: string };

/**
 * Stores `rows` in one statement (tests, benchmark seeding). The rows travel as one JSON
 * document: both drivers pass a text parameter the same way, whatever the number of rows.
 */
export async function insertSubmissions(db: Queryable, rows: readonly NewSubmission[]) {
  const records = rows.map((row) => ({
    id: row.id,
    form_id: row.formId,
    organization_id: row.organizationId,
    is_spam: row.isSpam,
    spam_reason: row.spamReason,
    answers: row.answers,
    search_text: submissionSearchText(row.answers),
    meta: row.meta,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }));
  await db.query(
    `INSERT INTO submissions (id, form_id, organization_id, is_spam, spam_reason, answers,
       search_text, meta, created_at, updated_at)
     SELECT id, form_id, organization_id, is_spam, spam_reason, answers, search_text, meta,
            created_at, updated_at
       FROM jsonb_to_recordset($1::jsonb) AS r(id text, form_id text, organization_id text,
            is_spam boolean, spam_reason text, answers jsonb, search_text text, meta jsonb,
            created_at timestamptz, updated_at timestamptz)`,
    [JSON.stringify(records)],
  );
}

/** Whether the organization has the form. */
export async function formExists(db: Queryable, organizationId: string, formId: string) {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM forms WHERE organization_id = $1 AND id = $2",
    [organizationId, formId],
  );
  return rows.length > 0;
}

/** The submission, if the organization has the form and the form has it; `formFound` tells which. */
export async function findSubmission(
  db: Queryable,
  organizationId: string,
  formId: string,
  submissionId: string,
): Promise<{ formFound: boolean; row: SubmissionRow | null }> {
  const rows = await db.query<SubmissionRow>(
    `SELECT ${SUBMISSION_COLUMNS} FROM forms f
       LEFT JOIN submissions s ON s.form_id = f.id AND s.id = $3
      WHERE f.organization_id = $1 AND f.id = $2`,
    [organizationId, formId, submissionId],
  );
  const found = rows[0];
  return { formFound: found !== undefined, row: found?.id ? found : null };
}

/** Locks the submission until the transaction ends; its spam state, or null when there is none. */
export async function lockSubmission(
  db: Queryable,
  organizationId: string,
  formId: string,
  submissionId: string,
): Promise<{ isSpam: boolean } | null> {
  const rows = await db.query<{ isSpam: boolean }>(
    `SELECT is_spam AS "isSpam" FROM submissions
      WHERE organization_id = $1 AND form_id = $2 AND id = $3 FOR UPDATE`,
    [organizationId, formId, submissionId],
  );
  return rows[0] ?? null;
}

/** Moves a submission into spam (reason `manual`) or out of it (no reason). */
export async function setSpam(
  db: Queryable,
  organizationId: string,
  submissionId: string,
  isSpam: boolean,
  now: Date,
): Promise<SubmissionRow> {
  const rows = await db.query<SubmissionRow>(
    // updated_at moves forward even when two updates land within one millisecond.
    `UPDATE submissions s SET is_spam = $2,
            spam_reason = CASE WHEN $2 THEN 'manual' END,
            updated_at = GREATEST($3, s.updated_at + interval '1 millisecond')
      WHERE s.id = $1 AND s.organization_id = $4
      RETURNING ${SUBMISSION_COLUMNS}`,
    [submissionId, isSpam, now, organizationId],
  );
  return rows[0] as SubmissionRow;
}

export async function deleteSubmission(
  db: Queryable,
  organizationId: string,
  formId: string,
  submissionId: string,
) {
  const rows = await db.query<{ id: string }>(
    `DELETE FROM submissions WHERE organization_id = $1 AND form_id = $2 AND id = $3
      RETURNING id`,
    [organizationId, formId, submissionId],
  );
  return rows.length > 0;
}
