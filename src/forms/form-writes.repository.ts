import type { Database, Queryable } from "../db/database.ts";
import { batchesPerStore, StatementBatches } from "../db/statement-batches.ts";
import { type ItemColumn, isoText, statementItems } from "../db/statement-items.ts";
import { type Announcement, announceEachColumn } from "./form-changes.repository.ts";
import type { FormSettings } from "./form-defaults.ts";
import {
  type Announced,
  announcedById,
  assignments,
  byId,
  FORM_KEY,
  type FormKey,
  nextVersion,
  PAYLOAD,
  sharedAnnouncement,
} from "./form-items.ts";
import { type FormPatch, patchForms } from "./form-patches.repository.ts";
import {
  FORM_COLUMNS,
  HOSTED,
  NEW_FORM_COLUMNS,
  NEW_FORM_ITEM,
  NEW_FORM_VALUES,
  type NewFormRow,
  READS_CLOSED,
  type VersionedFormRow,
  WRITTEN_COLUMNS,
  type WrittenFormRow,
} from "./forms.repository.ts";

// Each statement takes the items of a batch as the relation `item` (form-items.ts).

export async function insertForms(db: Queryable, forms: NewFormRow[]): Promise<WrittenFormRow[]> {
  const item = statementItems(NEW_FORM_ITEM, forms, 2);
  const rows = await db.query<WrittenFormRow>(
    `INSERT INTO forms (${NEW_FORM_COLUMNS}) SELECT ${NEW_FORM_VALUES} FROM ${item.relation}
     RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed"`,
    [new Date(), ...item.params],
  );
  return byId(
    rows,
    forms.map((form) => form.id),
  ).map((row) => row as WrittenFormRow);
}

/** Each form, with the version of the row that was read, if it belongs to the organization. */
export async function findForms(
  db: Queryable,
  keys: FormKey[],
): Promise<(VersionedFormRow | null)[]> {
  const item = statementItems(FORM_KEY, keys, 2);
  const rows = await db.query<VersionedFormRow>(
    `SELECT ${FORM_COLUMNS}, ${READS_CLOSED} AS "isClosed", forms.xmin::text AS version
       FROM ${item.relation}
       JOIN forms ON forms.organization_id = item.organization_id_in AND forms.id = item.id_in`,
    [new Date(), ...item.params],
  );
  return byId(
    rows,
    keys.map((key) => key.formId),
  );
}

/** A whole new state for a form, written if the row is still at `version` (null: whatever). */
export interface FormUpdate extends FormKey {
  version: string | null;
  name: string;
  storedIsClosed: boolean;
  autoCloseAt: Date | null;
  settings: FormSettings;
  /** Null keeps the stored secret. */
  captchaSecret: string | null;
  announcement: Announcement;
}

const FORM_UPDATE: ItemColumn<FormUpdate>[] = [
  ...FORM_KEY,
  { name: "version_in", type: "text", of: (update) => update.version },
  { name: "name_in", type: "text", of: (update) => update.name },
  { name: "is_closed_in", type: "boolean", of: (update) => update.storedIsClosed },
  { name: "auto_close_at_in", type: "text", of: (update) => isoText(update.autoCloseAt) },
  { name: "settings_in", type: "text", of: (update) => JSON.stringify(update.settings) },
  { name: "captcha_secret_in", type: "text", of: (update) => update.captchaSecret },
  PAYLOAD,
];

/**
 * Writes each update whose row is still at its version (any, for a row locked by the caller).
 * Null for an item whose row changed or went since it was read.
 */
export async function updateForms(
  db: Queryable,
  updates: FormUpdate[],
): Promise<(WrittenFormRow | null)[]> {
  const item = statementItems(FORM_UPDATE, updates, 2);
  const rows = await db.query<Announced>(
    `UPDATE forms SET name = item.name_in, is_closed = item.is_closed_in,
            auto_close_at = item.auto_close_at_in::timestamptz, settings = item.settings_in::jsonb,
            captcha_secret = COALESCE(item.captcha_secret_in, captcha_secret),
            ${assignments(nextVersion("forms"))}
       FROM ${item.relation}
      WHERE organization_id = item.organization_id_in AND id = item.id_in
        AND (item.version_in IS NULL OR forms.xmin = item.version_in::xid)
      RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed",
                ${announceEachColumn(2 + FORM_UPDATE.length, HOSTED)}`,
    [new Date(), ...item.params, ...sharedAnnouncement(updates)],
  );
  return announcedById(rows, updates);
}

/** Most items per statement: enough for every connection of a busy instance at once. */
const MAX_ITEMS = 100;
const oneFormAtATime = { maxItems: MAX_ITEMS, keyOf: (item: FormKey) => item.formId };

/**
 * The store's writes and reads of single forms, each batched with the same calls that arrive
 * while the previous one runs (statement-batches.ts). A transaction calls the functions above
 * directly instead, on its own connection.
 */
export const formStatements = batchesPerStore((db) => ({
  insert: new StatementBatches((forms: NewFormRow[]) => insertForms(db, forms), {
    maxItems: MAX_ITEMS,
  }),
  find: new StatementBatches((keys: FormKey[]) => findForms(db, keys), { maxItems: MAX_ITEMS }),
  update: new StatementBatches((updates: FormUpdate[]) => updateForms(db, updates), oneFormAtATime),
  // Several changes of one form go together: the statement applies them in turn (patchForms).
  patch: new StatementBatches((patches: FormPatch[]) => patchForms(db, patches), {
    maxItems: MAX_ITEMS,
  }),
}));

/** What an update reads and writes of its form: in batches, or in the transaction that locked it. */
export interface FormAccess {
  find(key: FormKey): Promise<VersionedFormRow | null>;
  update(update: FormUpdate): Promise<WrittenFormRow | null>;
}

export function formsInBatches(db: Database): FormAccess {
  const statements = formStatements(db);
  return {
    find: (key) => statements.find.submit(key),
    update: (update) => statements.update.submit(update),
  };
}

/** On the transaction's own connection: the same statements, each with one item. */
export function formsInTransaction(tx: Queryable): FormAccess {
  return {
    find: async (key) => (await findForms(tx, [key]))[0] ?? null,
    update: async (update) => (await updateForms(tx, [update]))[0] ?? null,
  };
}
