import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database, Queryable } from "../db/database.ts";
import { AppError, formNotFound } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { autoCloseInstant } from "./auto-close.ts";
import { nextClosingState } from "./closing.ts";
import { DEFAULT_SETTINGS, type FormSettings } from "./form-defaults.ts";
import * as repository from "./forms.repository.ts";
import type {
  CreateFormInput,
  FormListItemRecord,
  FormRecord,
  ListFormsParams,
  UpdateFormInput,
} from "./forms.schemas.ts";

// Ids are ours: anything else cannot name a form, and never reaches the database.
const FORM_ID = /^form_[A-Za-z0-9_-]{22}$/;

const PAID_SETTINGS = [
  "sendRespondentEmailNotifications",
  "useCustomRedirect",
  "autoCloseEnabled",
] as const;
const AUTO_CLOSE_MEMBERS = [
  "autoCloseEnabled",
  "autoCloseDate",
  "autoCloseTime",
  "autoCloseTimezone",
];

/** The paid setting `input` turns on that the owner's plan does not allow, if any. */
function paidSettingRefused(owner: KeyOwner, input: CreateFormInput | UpdateFormInput) {
  if (owner.plan === "paid") return undefined;
  return PAID_SETTINGS.find((member) => input[member] === true);
}

const allowedOnPlan = (owner: KeyOwner, input: CreateFormInput | UpdateFormInput) =>
  paidSettingRefused(owner, input) === undefined;

/** On the free plan, turning on a paid setting is refused; turning it off is always allowed. */
function requirePlanFor(owner: KeyOwner, input: CreateFormInput | UpdateFormInput) {
  const refused = paidSettingRefused(owner, input);
  if (refused) throw new AppError("forbidden", `${refused}: needs the paid plan`);
}

/**
 * Whether the update changes the auto-close deadline: the new deadline depends on the stored
 * settings, and whether it re-arms the form on the stored deadline, so that needs the stored row.
 * `isClosed` alone does not: it is applied in the one statement (see patchForm).
 */
const changesDeadline = (input: UpdateFormInput) =>
  AUTO_CLOSE_MEMBERS.some((member) => member in input);

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
  if (!changesDeadline(input) && allowedOnPlan(owner, input)) {
    // Nothing here depends on the stored row: one statement merges the change into it. (A plan
    // refusal takes the path below, which reads first: a missing form is a 404 before a 403.)
    const row = await repository.patchForm(
      db,
      owner.organizationId,
      formId,
      {
        name: input.name ?? null,
        settings: settingsOf(input),
        captchaSecret: input.providerCaptchaSecretKey ?? null,
        isClosed: input.isClosed ?? null,
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
  requirePlanFor(owner, input);
  const settings = { ...DEFAULT_SETTINGS, ...current.settings, ...settingsOf(input) };
  const touchesDeadline = AUTO_CLOSE_MEMBERS.some((member) => member in input);
  const deadline = autoCloseInstant(settings);
  const previous = autoCloseInstant({ ...DEFAULT_SETTINGS, ...current.settings });
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

/** `%`, `_` and `\` in a search term match themselves, not LIKE's wildcards. */
function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listForms(db: Database, owner: KeyOwner, params: ListFormsParams) {
  const page = params.page ?? 1;
  const pageSize = params.pageSize ?? 20;
  const filter: repository.ListFilter = {
    organizationId: owner.organizationId,
    type: params.type ?? null,
    namePattern: params.search ? containsPattern(params.search) : null,
  };
  // BigInt: page may be as large as 2^53 - 1, and page × pageSize is not safe as a Number.
  const offset = BigInt(page - 1) * BigInt(pageSize);
  const { total, rows } = await repository.listFormPage(
    db,
    filter,
    params.sort ?? "createdAt",
    pageSize,
    offset,
    new Date(),
  );
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
    meta: { total },
    pagination: {
      totalPages,
      currentPage: page,
      nextPage: page < totalPages ? page + 1 : null,
      previousPage: page > 1 ? page - 1 : null,
    },
  };
}
