import type { Database, Queryable } from "../db/database.ts";
import { batchesPerStore, StatementBatches } from "../db/statement-batches.ts";
import { type ItemColumn, isoText, statementItems } from "../db/statement-items.ts";
import {
  type Announcement,
  announceEachColumn,
  announceEachParams,
} from "./form-changes.repository.ts";
import type { FormSettings } from "./form-defaults.ts";
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

// Each statement here takes the items of a batch (statement-batches.ts) as the relation `item`
// (statement-items.ts). $1 is the instant of the statement, as READS_CLOSED expects.

/** The statement's row for each item, found by the form's id; null where it wrote none. */
function byId<Row extends { id: string }>(rows: Row[], ids: string[]): (Row | null)[] {
  const found = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => found.get(id) ?? null);
}

/** A written row, and how many instances must confirm the announcement the write carried. */
type Announced = WrittenFormRow & { listeners: number };

/** The hosted pages' caches learn of each write from the statement itself (form-changes.ts). */
function announced(
  rows: Announced[],
  items: { formId: string; announcement: Announcement }[],
): (WrittenFormRow | null)[] {
  return byId(
    rows,
    items.map((item) => item.formId),
  ).map((row, index) => {
    if (!row) return null;
    const { listeners, ...form } = row;
    (items[index] as { announcement: Announcement }).announcement.listeners = listeners;
    return form;
  });
}

/** The announcement's parameters, which every item of a statement shares but its payload. */
const sharedAnnouncement = (items: { announcement: Announcement }[]) =>
  announceEachParams((items[0] as { announcement: Announcement }).announcement);

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

export interface FormKey {
  organizationId: string;
  formId: string;
}

const FORM_KEY: ItemColumn<FormKey>[] = [
  { name: "organization_id_in", type: "text", of: (key) => key.organizationId },
  { name: "id_in", type: "text", of: (key) => key.formId },
];

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

/** The payload that announces an item's change, as the last column of its items. */
const PAYLOAD: ItemColumn<{ announcement: Announcement }> = {
  name: "payload_in",
  type: "text",
  of: (item) => item.announcement.payload,
};

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
    // updated_at moves forward even when two updates land within one millisecond.
    `UPDATE forms SET name = item.name_in, is_closed = item.is_closed_in,
            auto_close_at = item.auto_close_at_in::timestamptz, settings = item.settings_in::jsonb,
            captcha_secret = COALESCE(item.captcha_secret_in, captcha_secret),
            revision = revision + 1,
            updated_at = GREATEST($1, updated_at + interval '1 millisecond')
       FROM ${item.relation}
      WHERE organization_id = item.organization_id_in AND id = item.id_in
        AND (item.version_in IS NULL OR forms.xmin = item.version_in::xid)
      RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed",
                ${announceEachColumn(2 + FORM_UPDATE.length, HOSTED)}`,
    [new Date(), ...item.params, ...sharedAnnouncement(updates)],
  );
  return announced(rows, updates);
}

/** A change that needs nothing of the stored row but the row itself: see patchForms. */
export interface FormPatch extends FormKey {
  name: string | null;
  settings: Partial<FormSettings>;
  captchaSecret: string | null;
  isClosed: boolean | null;
  announcement: Announcement;
}

const FORM_PATCH: ItemColumn<FormPatch>[] = [
  ...FORM_KEY,
  { name: "name_in", type: "text", of: (patch) => patch.name },
  { name: "settings_in", type: "text", of: (patch) => JSON.stringify(patch.settings) },
  { name: "captcha_secret_in", type: "text", of: (patch) => patch.captchaSecret },
  { name: "is_closed_in", type: "boolean", of: (patch) => patch.isClosed },
  PAYLOAD,
];

/**
 * Merges each item's `settings` into the stored ones and sets the name and `isClosed` if given:
 * for changes that leave the auto-close deadline alone, which needs the stored row to compute.
 * A given `isClosed` is the switch from now on, and a deadline that has passed is spent with it,
 * as nextClosingState has it (closing.ts). Reopening (`isClosed: false`) a form whose settings
 * after the change limit its responses is left alone (null, as for a missing form): only a count
 * read under the form's lock can tell whether the limit still holds (see lockForm).
 */
export async function patchForms(
  db: Queryable,
  patches: FormPatch[],
): Promise<(WrittenFormRow | null)[]> {
  const item = statementItems(FORM_PATCH, patches, 2);
  const rows = await db.query<Announced>(
    `UPDATE forms SET name = COALESCE(item.name_in, name),
            settings = settings || item.settings_in::jsonb,
            captcha_secret = COALESCE(item.captcha_secret_in, captcha_secret),
            is_closed = COALESCE(item.is_closed_in, is_closed),
            auto_close_at = CASE WHEN item.is_closed_in IS NOT NULL AND auto_close_at <= $1
                                 THEN NULL ELSE auto_close_at END,
            revision = revision + 1,
            updated_at = GREATEST($1, updated_at + interval '1 millisecond')
       FROM ${item.relation}
      WHERE organization_id = item.organization_id_in AND id = item.id_in
        -- IS FALSE: a rename or a closing decides here without merging the settings again.
        AND NOT COALESCE(item.is_closed_in IS FALSE
          AND ((settings || item.settings_in::jsonb) ->> 'limitResponses')::boolean
          AND (settings || item.settings_in::jsonb) ->> 'maxResponses' IS NOT NULL, false)
      RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed",
                ${announceEachColumn(2 + FORM_PATCH.length, HOSTED)}`,
    [new Date(), ...item.params, ...sharedAnnouncement(patches)],
  );
  return announced(rows, patches);
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
  patch: new StatementBatches((patches: FormPatch[]) => patchForms(db, patches), oneFormAtATime),
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
