import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database, Queryable } from "../db/database.ts";
import { formNotFound, invalid } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { autoCloseInstant } from "./auto-close.ts";
import { nextClosingState } from "./closing.ts";
import type { ExpensiveListGate } from "./expensive-lists.ts";
import { DEFAULT_SETTINGS, type FormSettings } from "./form-defaults.ts";
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

/** Whether the update changes what decides if the form is closed: that needs the stored row. */
const touchesClosing = (input: UpdateFormInput) =>
  "isClosed" in input || AUTO_CLOSE_MEMBERS.some((member) => member in input);

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
    ...settings
  } = input as CreateFormInput;
  if (settings.emailsToNotify) settings.emailsToNotify = withoutDuplicates(settings.emailsToNotify);
  return settings;
}

export function toFormRecord(row: repository.FormRow): FormRecord {
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

/** `db` may be a transaction: an idempotent create stores its response in the same one. */
export async function createForm(db: Queryable, owner: KeyOwner, input: CreateFormInput) {
  requirePlanFor(owner, input);
  const now = new Date();
  const settings = { ...DEFAULT_SETTINGS, ...settingsOf(input) };
  const closing = nextClosingState(
    { isClosed: false, autoCloseAt: null },
    { isClosed: input.isClosed, deadline: autoCloseInstant(settings) },
    now,
  );
  const row = await repository.insertForm(
    db,
    {
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
    },
    now,
  );
  return toFormRecord(row);
}

export async function getForm(db: Database, owner: KeyOwner, formId: string) {
  const row = FORM_ID.test(formId)
    ? await repository.findForm(db, owner.organizationId, formId, new Date())
    : null;
  if (!row) throw formNotFound();
  return toFormRecord(row);
}

export async function updateForm(
  db: Database,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
) {
  if (!FORM_ID.test(formId)) throw formNotFound();
  const needsStoredPlanCheck = owner.plan !== "paid" && PAID_MEMBERS.some((m) => m in input);
  if (!touchesClosing(input) && !needsStoredPlanCheck) {
    // Nothing here depends on the stored row: one statement merges the change into it. (On the
    // free plan, paid members take the path below, which reads first: the plan's rule depends on
    // the stored settings, and a missing form is a 404 before a 403.)
    const row = await repository.patchForm(
      db,
      owner.organizationId,
      formId,
      {
        name: input.name ?? null,
        settings: settingsOf(input),
        captchaSecret: input.providerCaptchaSecretKey ?? null,
      },
      new Date(),
    );
    if (!row) throw formNotFound();
    return toFormRecord(row);
  }
  // Most updates meet no other writer: read, then write only if the row is still as it was read,
  // without the round trips of a transaction.
  const updated = await applyUpdate(db, owner, formId, input, false);
  if (updated) return updated;
  // Another write got there first: lock the row and apply this one to what is stored now.
  const retried = await db.transaction((tx) => applyUpdate(tx, owner, formId, input, true));
  if (!retried) throw formNotFound();
  return retried;
}

/** The updated record, or null when the row changed after it was read (never when `locked`). */
async function applyUpdate(
  db: Queryable,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
  locked: boolean,
): Promise<FormRecord | null> {
  const now = new Date();
  const current = await repository.findForm(db, owner.organizationId, formId, now, locked);
  if (!current) throw formNotFound();
  const stored = { ...DEFAULT_SETTINGS, ...current.settings };
  requirePlanFor(owner, input, stored);
  const settings = { ...stored, ...settingsOf(input) };
  if (input.isClosed === false) requireBelowLimit(settings, current.submissions);
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
  );
  return row && toFormRecord(row);
}

export async function deleteForm(db: Database, owner: KeyOwner, formId: string) {
  const deleted =
    FORM_ID.test(formId) && (await repository.deleteForm(db, owner.organizationId, formId));
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
  const totalPages = Math.ceil(total / pageSize);
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
    pagination: {
      totalPages,
      currentPage: page,
      nextPage: page < totalPages ? page + 1 : null,
      previousPage: page > 1 ? page - 1 : null,
    },
  };
}
