import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database, Queryable } from "../db/database.ts";
import { checkFields } from "../fields/field-rules.ts";
import { formNotFound, invalid } from "../http/errors.ts";
import { paginationOf } from "../http/pagination.ts";
import { newId } from "../ids.ts";
import { autoCloseInstant } from "./auto-close.ts";
import { nextClosingState } from "./closing.ts";
import type { ExpensiveListGate } from "./expensive-lists.ts";
import type { Announcement } from "./form-changes.repository.ts";
import { announceFormChange, formChange } from "./form-changes.ts";
import { DEFAULT_SETTINGS, type FormSettings } from "./form-defaults.ts";
import type { NewFormRow } from "./forms.repository.ts";
import * as repository from "./forms.repository.ts";
import type {
  CreateFormInput,
  FormListItemRecord,
  FormRecord,
  ListFormsParams,
  UpdateFormInput,
} from "./forms.schemas.ts";
import { PAID_FEATURES, PAID_MEMBERS, requirePlanFor } from "./plans.ts";

// Ids are ours: anything else cannot name a form, and never reaches the database.
export const FORM_ID = /^form_[A-Za-z0-9_-]{22}$/;

const AUTO_CLOSE_MEMBERS = ["autoCloseEnabled", ...PAID_FEATURES.autoCloseEnabled];

/**
 * Reopening a form whose limit of responses still holds would not open it: refused, unless the
 * same update raises the limit or turns it off (`settings` are the ones after the update).
 */
function requireBelowLimit(settings: FormSettings, submissions: number) {
  const { limitResponses, maxResponses } = settings;
  if (limitResponses && maxResponses !== null && submissions >= maxResponses) {
    throw invalid(
      "isClosed",
      `the form has reached its limit of ${maxResponses} responses; raise maxResponses or turn limitResponses off to reopen it`,
    );
  }
}

/**
 * Whether the update changes the auto-close deadline: the new deadline depends on the stored
 * settings, and whether it re-arms the form on the stored deadline, so that needs the stored row.
 */
const changesDeadline = (input: UpdateFormInput) =>
  AUTO_CLOSE_MEMBERS.some((member) => member in input);

/** Whether the settings limit the responses: reopening then needs the count, read under lock. */
const limitsResponses = ({ limitResponses, maxResponses }: FormSettings) =>
  limitResponses && maxResponses !== null;

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
function settingsOf(input: CreateFormInput | UpdateFormInput): Partial<FormSettings> {
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

export async function createForm(db: Queryable, owner: KeyOwner, input: CreateFormInput) {
  const now = new Date();
  return toFormRecord(await repository.insertForm(db, newFormRow(owner, input, now), now));
}

export async function getForm(db: Database, owner: KeyOwner, formId: string) {
  const row = FORM_ID.test(formId)
    ? await repository.findForm(db, owner.organizationId, formId, new Date())
    : null;
  if (!row) throw formNotFound();
  return toFormRecord(row);
}

/**
 * The update, announced by the statement that writes it: it returns once every instance's hosted
 * pages have dropped the form (form-changes.ts).
 */
export async function updateForm(
  db: Database,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
) {
  // The fields' rules are the body's validation: a 422 before the 404 and the plan's 403, as the
  // schema's, and checked once whichever path below applies the update.
  const changes = settingsOf(input);
  if (!FORM_ID.test(formId)) throw formNotFound();
  return announceFormChange(db, formChange.form(formId), (announcement) =>
    writeUpdate(db, owner, formId, input, changes, announcement),
  );
}

async function writeUpdate(
  db: Database,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
  changes: Partial<FormSettings>,
  announcement: Announcement,
) {
  const needsStoredPlanCheck = owner.plan !== "paid" && PAID_MEMBERS.some((m) => m in input);
  const locked = async () => {
    const retried = await db.transaction((tx) =>
      applyUpdate(tx, owner, formId, input, changes, announcement, true),
    );
    if (!retried) throw formNotFound();
    return retried;
  };
  if (!changesDeadline(input) && !needsStoredPlanCheck) {
    // Nothing here depends on the stored row: one statement merges the change into it, so that
    // the row is locked only while that statement runs. (On the free plan, paid members take the
    // path below, which reads first: the plan's rule depends on the stored settings, and a
    // missing form is a 404 before a 403.)
    const row = await repository.patchForm(
      db,
      owner.organizationId,
      formId,
      {
        name: input.name ?? null,
        settings: changes,
        captchaSecret: input.providerCaptchaSecretKey ?? null,
        isClosed: input.isClosed ?? null,
      },
      new Date(),
      announcement,
    );
    if (row) return toFormRecord(row);
    // A missing form (404), or a reopening under a limit of responses: decided under the lock.
    return locked();
  }
  // Most updates meet no other writer: read, then write only if the row is still as it was read,
  // without the round trips of a transaction.
  const updated = await applyUpdate(db, owner, formId, input, changes, announcement, false);
  if (updated) return updated;
  // Another write got there first, or the update needs the count as of now: lock the row and
  // apply this one to what is stored now.
  return locked();
}

/** The updated record, or null when the row changed after it was read (never when `locked`). */
async function applyUpdate(
  db: Queryable,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
  changes: Partial<FormSettings>,
  announcement: Announcement,
  locked: boolean,
): Promise<FormRecord | null> {
  if (locked && !(await repository.lockForm(db, owner.organizationId, formId))) {
    throw formNotFound();
  }
  const now = new Date();
  const current = await repository.findForm(db, owner.organizationId, formId, now);
  if (!current) throw formNotFound();
  const stored = { ...DEFAULT_SETTINGS, ...current.settings };
  requirePlanFor(owner, input, stored);
  const settings = { ...stored, ...changes };
  if (input.isClosed === false && limitsResponses(settings)) {
    // A submission may be accepted between this read and the write: the count that decides is
    // the one read under the lock, which intakes into a limited form take too.
    if (!locked) return null;
    requireBelowLimit(settings, current.submissions);
  }
  const touchesDeadline = AUTO_CLOSE_MEMBERS.some((member) => member in input);
  const deadline = autoCloseInstant(settings);
  const previous = autoCloseInstant(stored);
  const closing = nextClosingState(
    { isClosed: current.storedIsClosed, autoCloseAt: current.autoCloseAt },
    {
      isClosed: input.isClosed,
      // Re-sending the same deadline must not close again a form that was reopened after it.
      deadline:
        touchesDeadline && deadline?.getTime() !== previous?.getTime() ? deadline : undefined,
    },
    now,
  );
  const row = await repository.updateForm(
    db,
    owner.organizationId,
    formId,
    locked ? null : current.version,
    {
      name: input.name ?? current.name,
      storedIsClosed: closing.isClosed,
      autoCloseAt: closing.autoCloseAt,
      settings,
      captchaSecret: input.providerCaptchaSecretKey,
    },
    now,
    announcement,
  );
  return row && toFormRecord(row);
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
  const filter: repository.ListFilter = {
    organizationId: owner.organizationId,
    type: params.type ?? null,
    namePattern: params.search ? containsPattern(params.search) : null,
  };
  // BigInt: page may be as large as 2^53 - 1, and page × pageSize is not safe as a Number.
  const offset = BigInt(page - 1) * BigInt(pageSize);
  const read = () =>
    repository.listFormPage(db, filter, params.sort ?? "createdAt", pageSize, offset, new Date());
  const expensive = filter.namePattern !== null || offset >= repository.DEEP_OFFSET;
  const { total, capped, rows } = expensive
    ? await gate.run(owner.organizationId, read)
    : await read();
  if (capped && offset >= BigInt(repository.SEARCH_MATCH_CAP)) {
    throw invalid(
      "page",
      `a search lists only its first ${repository.SEARCH_MATCH_CAP} matches, up to page ${Math.ceil(repository.SEARCH_MATCH_CAP / pageSize)} at pageSize ${pageSize}; narrow the search`,
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
