import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database, Queryable } from "../db/database.ts";
import type { FileLinks } from "../files/file-links.ts";
import { AppError, formNotFound } from "../http/errors.ts";
import { parseInstant } from "../http/formats.ts";
import { paginationOf } from "../http/pagination.ts";
import { changeSubmissionCount } from "./submission-counts.repository.ts";
import { listSubmissionPage, type SubmissionFilter } from "./submission-list.repository.ts";
import * as repository from "./submissions.repository.ts";
import type {
  ExportSubmissionsParams,
  ListSubmissionsParams,
  SubmissionRecord,
  UpdateSubmissionInput,
} from "./submissions.schemas.ts";

// Ids are ours: anything else cannot name a form or a submission, and never reaches the database.
const FORM_ID = /^form_[A-Za-z0-9_-]{22}$/;
const SUBMISSION_ID = /^sub_[A-Za-z0-9_-]{22}$/;

export const submissionNotFound = () => new AppError("not_found", "submission: not found");

/** A file's signed link, by its id (see FileLinks.signer). */
export type LinkOf = (fileId: string) => string;

/** The API's record; the export's NDJSON lines are this record too, member for member. */
export function toSubmissionRecord(
  row: repository.SubmissionRow,
  linkOf: LinkOf,
): SubmissionRecord {
  return {
    id: row.id,
    formId: row.formId,
    isSpam: row.isSpam,
    spamReason: row.spamReason,
    answers: row.answers.map((answer) => ({
      id: answer.id,
      label: answer.label,
      value: answer.value,
    })),
    files: row.files.map((file) => ({
      id: file.id,
      field: file.field,
      name: file.name,
      type: file.type,
      size: file.size,
      url: linkOf(file.id),
    })),
    meta: {
      ip: row.meta.ip ?? null,
      country: row.meta.country ?? null,
      userAgent: row.meta.userAgent ?? null,
      referrer: row.meta.referrer ?? null,
    },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** `%`, `_` and `\` in a search term match themselves, not LIKE's wildcards. */
function containsPattern(term: string): string {
  return `%${term.normalize("NFC").replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The filter the query selects, or a 404 for an id that cannot be a form. */
export function filterOf(
  owner: KeyOwner,
  formId: string,
  params: ListSubmissionsParams | ExportSubmissionsParams,
): SubmissionFilter {
  if (!FORM_ID.test(formId)) throw formNotFound();
  return {
    organizationId: owner.organizationId,
    formId,
    isSpam: params.isSpam === "true",
    // An empty term matches everything: it is no search.
    searchPattern: params.search ? containsPattern(params.search) : null,
    // The query's validation has parsed them once already.
    since: params.since === undefined ? null : parseInstant(params.since),
    until: params.until === undefined ? null : parseInstant(params.until),
  };
}

export async function listSubmissions(
  db: Database,
  links: FileLinks,
  owner: KeyOwner,
  formId: string,
  params: ListSubmissionsParams,
) {
  const filter = filterOf(owner, formId, params);
  const page = params.page ?? 1;
  const pageSize = params.pageSize ?? 20;
  // BigInt: page may be as large as 2^53 - 1, and page × pageSize is not safe as a Number.
  const offset = BigInt(page - 1) * BigInt(pageSize);
  const { totals, rows } = await listSubmissionPage(db, filter, pageSize, offset);
  if (!totals) throw formNotFound();
  const total = filter.isSpam ? totals.spam : totals.inbox;
  const linkOf = await links.signer();
  return {
    data: rows.map((row) => toSubmissionRecord(row, linkOf)),
    meta: { total, totalInbox: totals.inbox, totalSpam: totals.spam },
    pagination: paginationOf(total, page, pageSize),
  };
}

/** A 404 naming what is missing: the form (or another organization's) or the submission. */
async function notFound(db: Queryable, owner: KeyOwner, formId: string): Promise<AppError> {
  return (await repository.formExists(db, owner.organizationId, formId))
    ? submissionNotFound()
    : formNotFound();
}

function checkIds(formId: string, submissionId: string) {
  if (!FORM_ID.test(formId)) throw formNotFound();
  if (!SUBMISSION_ID.test(submissionId)) throw submissionNotFound();
}

export async function getSubmission(
  db: Database,
  links: FileLinks,
  owner: KeyOwner,
  formId: string,
  submissionId: string,
) {
  checkIds(formId, submissionId);
  const found = await repository.findSubmission(db, owner.organizationId, formId, submissionId);
  if (!found.formFound) throw formNotFound();
  if (!found.row) throw submissionNotFound();
  return toSubmissionRecord(found.row, await links.signer());
}

/**
 * Moves the submission into or out of spam, and the form's counter with it, in one transaction.
 * Asking for the state it is already in changes nothing, not even the reason it was caught.
 */
export async function updateSubmission(
  db: Database,
  links: FileLinks,
  owner: KeyOwner,
  formId: string,
  submissionId: string,
  input: UpdateSubmissionInput,
) {
  checkIds(formId, submissionId);
  const row = await db.transaction(async (tx) => {
    const current = await repository.lockSubmission(tx, owner.organizationId, formId, submissionId);
    if (!current) throw await notFound(tx, owner, formId);
    if (current.isSpam === input.isSpam) {
      const found = await repository.findSubmission(tx, owner.organizationId, formId, submissionId);
      return found.row as repository.SubmissionRow;
    }
    const updated = await repository.setSpam(
      tx,
      owner.organizationId,
      submissionId,
      input.isSpam,
      new Date(),
    );
    // The counter counts accepted submissions that are not spam.
    await changeSubmissionCount(tx, formId, input.isSpam ? -1 : 1);
    return updated;
  });
  return toSubmissionRecord(row, await links.signer());
}

/** The form's counter keeps counting a deleted submission: it counts what was accepted. */
export async function deleteSubmission(
  db: Database,
  owner: KeyOwner,
  formId: string,
  submissionId: string,
) {
  checkIds(formId, submissionId);
  const deleted = await repository.deleteSubmission(db, owner.organizationId, formId, submissionId);
  if (!deleted) throw await notFound(db, owner, formId);
}
