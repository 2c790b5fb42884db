import type { ItemColumn } from "../db/statement-items.ts";
import { type Announcement, announceEachParams } from "./form-changes.repository.ts";
import type { WrittenFormRow } from "./forms.repository.ts";

// The pieces the forms' batched statements share (form-writes.repository.ts and
// form-patches.repository.ts). Each statement takes the items of a batch (statement-batches.ts)
// as the relation `item` (statement-items.ts); $1 is the instant of the statement, as
// READS_CLOSED expects.

export interface FormKey {
  organizationId: string;
  formId: string;
}

export const FORM_KEY: ItemColumn<FormKey>[] = [
  { name: "organization_id_in", type: "text", of: (key) => key.organizationId },
  { name: "id_in", type: "text", of: (key) => key.formId },
];

/** The payload that announces an item's change, as the last column of its items. */
export const PAYLOAD: ItemColumn<{ announcement: Announcement }> = {
  name: "payload_in",
  type: "text",
  of: (item) => item.announcement.payload,
};

/** The statement's row for each item, found by the form's id; null where it wrote none. */
export function byId<Row extends { id: string }>(rows: Row[], ids: string[]): (Row | null)[] {
  const found = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => found.get(id) ?? null);
}

/** A written row, and how many instances must confirm the announcement the write carried. */
export type Announced = WrittenFormRow & { listeners: number };

/**
 * The hosted pages' caches learn of each write from the statement itself (form-changes.ts): each
 * item's row (`rows`, in the items' order, null where it wrote none) gives its announcement the
 * count of instances that must confirm it.
 */
export function announced(
  rows: (Announced | null)[],
  items: { announcement: Announcement }[],
): (WrittenFormRow | null)[] {
  return rows.map((row, index) => {
    if (!row) return null;
    const { listeners, ...form } = row;
    (items[index] as { announcement: Announcement }).announcement.listeners = listeners;
    return form;
  });
}

/** announced, for a statement whose rows are found by their form's id (one per form). */
export const announcedById = (
  rows: Announced[],
  items: { formId: string; announcement: Announcement }[],
) =>
  announced(
    byId(
      rows,
      items.map((item) => item.formId),
    ),
    items,
  );

/**
 * What every write of a form's row changes besides its content, as [column, value] from the row
 * `stored`: its revision counts the write, and updated_at moves forward even when two writes land
 * within one millisecond ($1 is the statement's instant).
 */
export const nextVersion = (stored: string): [string, string][] => [
  ["revision", `${stored}.revision + 1`],
  ["updated_at", `GREATEST($1, ${stored}.updated_at + interval '1 millisecond')`],
];

/** [column, value] pairs as an UPDATE's SET list. */
export const assignments = (state: [string, string][]) =>
  state.map(([column, value]) => `${column} = ${value}`).join(", ");

/** The announcement's parameters, which every item of a statement shares but its payload. */
export const sharedAnnouncement = (items: { announcement: Announcement }[]) =>
  announceEachParams((items[0] as { announcement: Announcement }).announcement);
