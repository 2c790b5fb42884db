import type { Queryable } from "../db/database.ts";
import type { ReceivedFile } from "./uploads.ts";

/** A file as the submission record lists it (the record adds its link). */
export interface FileEntry {
  id: string;
  field: string;
  name: string;
  type: string;
  size: number;
}

export interface FileContent {
  name: string;
  type: string;
  content: Buffer;
}

export const fileEntries = (files: readonly ReceivedFile[]): FileEntry[] =>
  files.map(({ id, field, name, type, size }) => ({ id, field, name, type, size }));

/**
 * Stores the files' contents, one at a time: only one is read into memory at once. Contents
 * travel as base64 text, which both stores decode natively; the embedded store's driver turns a
 * binary parameter into text byte by byte, ten times slower (seconds for 10 MB).
 */
export async function insertSubmissionFiles(
  db: Queryable,
  submissionId: string,
  files: readonly ReceivedFile[],
) {
  for (const file of files) {
    await db.query(
      `INSERT INTO submission_files (id, submission_id, type, name, content)
       VALUES ($1, $2, $3, $4, decode($5, 'base64'))`,
      [file.id, submissionId, file.type, file.name, (await file.content()).toString("base64")],
    );
  }
}

/** Read as base64 text, for the reason insertSubmissionFiles gives. */
const CONTENT = "encode(sf.content, 'base64') AS content";

interface ContentRow {
  name: string;
  type: string;
  content: string;
}

const asFile = (row: ContentRow): FileContent => ({
  name: row.name,
  type: row.type,
  content: Buffer.from(row.content, "base64"),
});

/**
 * The file of the organization's form and submission; which of the three is missing otherwise,
 * so that the 404 names it.
 */
export async function findSubmissionFile(
  db: Queryable,
  organizationId: string,
  formId: string,
  submissionId: string,
  fileId: string,
): Promise<FileContent | "form" | "submission" | "file"> {
  const rows = await db.query<
    Omit<ContentRow, "content"> & { submissionId: string | null; content: string | null }
  >(
    `SELECT s.id AS "submissionId", sf.name, sf.type, ${CONTENT} FROM forms f
       LEFT JOIN submissions s ON s.form_id = f.id AND s.id = $3
       LEFT JOIN submission_files sf ON sf.submission_id = s.id AND sf.id = $4
      WHERE f.organization_id = $1 AND f.id = $2`,
    [organizationId, formId, submissionId, fileId],
  );
  const row = rows[0];
  if (!row) return "form";
  if (!row.submissionId) return "submission";
  if (row.content === null) return "file";
  return asFile({ name: row.name, type: row.type, content: row.content });
}

/** The file, whoever owns it: for a link whose signature was checked. */
export async function findFile(db: Queryable, fileId: string): Promise<FileContent | null> {
  const rows = await db.query<ContentRow>(
    `SELECT sf.name, sf.type, ${CONTENT} FROM submission_files sf WHERE sf.id = $1`,
    [fileId],
  );
  const row = rows[0];
  return row ? asFile(row) : null;
}
