import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database } from "../db/database.ts";
import { checkFields } from "../fields/field-rules.ts";
import { formNotFound, invalid } from "../http/errors.ts";
import { paginationOf } from "../http/pagination.ts";
import { newId } from "../ids.ts";
import { autoCloseInstant } from "./auto-close.ts";
import { nextClosingState } from "./closing.ts";
import type { ExpensiveListGate } from "./expensive-lists.ts";
import { announceFormChange, formChange } from "./form-changes.ts";
import { DEFAULT_SETTINGS, type FormSettings } from "./form-defaults.ts";
import * as lists from "./form-list.repository.ts";
import { formStatements } from "./form-writes.repository.ts";
import type { NewFormRow } from "./forms.repository.ts";
import * as repository from "./forms.repository.ts";
import type {
  CreateFormInput,
  FormListItemRecord,
  FormRecord,
  ListFormsParams,
  UpdateFormInput,
} from "./forms.schemas.ts";
import { requirePlanFor } from "./plans.ts";

// Ids are ours: anything else cannot name a form, and never reaches the database.
export const FORM_ID = /^form_[A-Za-z0-9_-]{22}$/;

/** Addresses are compared without regard to case; the first spelling is kept. */
function withoutDuplicates(emails: string[]): string[] {
  const seen = new Set<string>();
  return emails.filter((email) => {
    const key = email.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The members of `input` that live in the settings document. */
export function settingsOf(input: CreateFormInput | UpdateFormInput): Partial<FormSettings> {
  const {
    name: _name,
    type: _type,
    isClosed: _closed,
    providerCaptchaSecretKey: _secret,
    fields,
    ...settings
  } = input as CreateFormInput;
  if (settings.emailsToNotify) settings.emailsToNotify = withoutDuplicates(settings.emailsToNotify);
  // Stored whole, defaults filled, so that every read and the page see the same fields.
  return fields ? { ...settings, fields: checkFields(fields) } : settings;
}

export function toFormRecord(row: repository.WrittenFormRow): FormRecord {
  return {
    ...DEFAULT_SETTINGS,
    ...row.settings,
    id: row.id,
    name: row.name,
    organizationId: row.organizationId,
    type: row.type,
    isClosed: row.isClosed,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The row a create inserts: the body checked (a 422 for its fields before the plan's 403, as the
 * schema's), the plan's features allowed, and the form closed at once when asked or when its
 * deadline has passed.
 */
export function newFormRow(owner: KeyOwner, input: CreateFormInput, now: Date): NewFormRow {
  const changes = settingsOf(input);
  requirePlanFor(owner, input);
  const settings = { ...DEFAULT_SETTINGS, ...changes };
  const closing = nextClosingState(
    { isClosed: false, autoCloseAt: null },
    { isClosed: input.isClosed, deadline: autoCloseInstant(settings) },
    now,
  );
  return {
    id: newId("form"),
    organizationId: owner.organizationId,
    name: input.name,
    type: input.type ?? "endpoint",
    storedIsClosed: closing.isClosed,
    autoCloseAt: closing.autoCloseAt,
    settings,
    captchaSecret: input.providerCaptchaSecretKey ?? "",
    createdAt: now,
    updatedAt: now,
  };
}

export async function createForm(db: Database, owner: KeyOwner, input: CreateFormInput) {
  const row = newFormRow(owner, input, new Date());
  return toFormRecord(await formStatements(db).insert.submit(row));
}

export async function getForm(db: Database, owner: KeyOwner, formId: string) {
  const row = FORM_ID.test(formId)
    ? await formStatements(db).find.submit({ organizationId: owner.organizationId, formId })
    : null;
  if (!row) throw formNotFound();
  return toFormRecord(row);
}

/** Announced as an update is: no instance shows the form's page once this returns. */
export async function deleteForm(db: Database, owner: KeyOwner, formId: string) {
  if (!FORM_ID.test(formId)) throw formNotFound();
  const deleted = await announceFormChange(db, formChange.form(formId), (announcement) =>
    repository.deleteForm(db, owner.organizationId, formId, announcement),
  );
  if (!deleted) throw formNotFound();
}

/**
 * `%`, `_` and `\` in a search term match themselves, not LIKE's wildcards. The term is in NFC, as
 * the names it is matched against are: `Cafe\u0301` finds `Café` and the other way round.
 */
function containsPattern(term: string): string {
  return `%${term.normalize("NFC").replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `gate` takes turns for the lists whose cost grows with the organization (a search, a deep page),
 * so that one organization's cannot starve the others.
 */
export async function listForms(
  db: Database,
  gate: ExpensiveListGate,
  owner: KeyOwner,
  params: ListFormsParams,
) {
  const page = params.page ?? 1;
  const pageSize = params.pageSize ?? 20;
  const filter: lists.ListFilter = {
    organizationId: owner.organizationId,
    type: params.type ?? null,
    namePattern: params.search ? containsPattern(params.search) : null,
  };
  // BigInt: page may be as large as 2^53 - 1, and page × pageSize is not safe as a Number.
  const offset = BigInt(page - 1) * BigInt(pageSize);
  const read = () =>
    lists.listFormPage(db, filter, params.sort ?? "createdAt", pageSize, offset, new Date());
  const expensive = filter.namePattern !== null || offset >= lists.DEEP_OFFSET;
  const { total, capped, rows } = expensive
    ? await gate.run(owner.organizationId, read)
    : await read();
  if (capped && offset >= BigInt(lists.SEARCH_MATCH_CAP)) {
    throw invalid(
      "page",
      `a search lists only its first ${lists.SEARCH_MATCH_CAP} matches, up to page ${Math.ceil(lists.SEARCH_MATCH_CAP / pageSize)} at pageSize ${pageSize}; narrow the search`,
    );
  }
  const data: FormListItemRecord[] = rows.map((row) => ({
    ...row,
    imageCompressionType: (row.imageCompressionType ??
      []) as FormListItemRecord["imageCompressionType"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }));
  return {
    data,
    meta: capped ? { total, totalCapped: true as const } : { total },
    pagination: paginationOf(total, page, pageSize),
  };
}
