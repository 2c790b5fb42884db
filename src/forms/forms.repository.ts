import type { Queryable } from "../db/database.ts";
import { type ItemColumn, isoText } from "../db/statement-items.ts";
import { SUBMISSIONS_SQL } from "../submissions/submission-counts.repository.ts";
import { type Announcement, announceColumn, announceParams } from "./form-changes.repository.ts";
import type { FormSettings } from "./form-defaults.ts";

export interface FormRow {
  id: string;
  organizationId: string;
  name: string;
  type: "endpoint" | "hosted";
  /** The stored switch; what clients see also counts a deadline that has passed. */
  storedIsClosed: boolean;
  /** Whether the form reads as closed at the `now` of the query. */
  isClosed: boolean;
  autoCloseAt: Date | null;
  submissions: number;
  settings: FormSettings;
  createdAt: Date;
  updatedAt: Date;
}

export type FormListRow = Pick<
  FormRow,
  "id" | "name" | "type" | "createdAt" | "updatedAt" | "isClosed" | "submissions" | "organizationId"
> & { imageCompressionType: string[] | null };

/** What a write returns: the record, without the count, which a written row's record leaves out. */
export const WRITTEN_COLUMNS = `id, organization_id AS "organizationId", name, type,
  is_closed AS "storedIsClosed", auto_close_at AS "autoCloseAt", settings,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export const FORM_COLUMNS = `${WRITTEN_COLUMNS}, ${SUBMISSIONS_SQL} AS submissions`;

/** A written form: its record, without the count of submissions (which the write did not read). */
export type WrittenFormRow = Omit<FormRow, "submissions">;

// $1 is always the instant the request is answered at: a deadline at or before it has closed the
// form. So has a limit of responses that the count has reached (submissions.md section 3).
export const READS_CLOSED = `(is_closed OR COALESCE(auto_close_at <= $1, false)
  OR COALESCE((settings ->> 'limitResponses')::boolean
    AND ${SUBMISSIONS_SQL} >= (settings ->> 'maxResponses')::int, false))`;

/** What a create inserts: the record's columns, and the captcha's secret, never read back. */
export type NewFormRow = Omit<FormRow, "isClosed" | "submissions"> & { captchaSecret: string };

/** The columns a create writes, in the order of NEW_FORM_VALUES. */
export const NEW_FORM_COLUMNS = `id, organization_id, name, type, is_closed, auto_close_at,
  settings, captcha_secret, created_at, updated_at`;

/** New forms as the items of a statement (statement-items.ts). */
export const NEW_FORM_ITEM: readonly ItemColumn<NewFormRow>[] = [
  { name: "id_in", type: "text", of: (form) => form.id },
  { name: "organization_id_in", type: "text", of: (form) => form.organizationId },
  { name: "name_in", type: "text", of: (form) => form.name },
  { name: "type_in", type: "text", of: (form) => form.type },
  { name: "is_closed_in", type: "boolean", of: (form) => form.storedIsClosed },
  { name: "auto_close_at_in", type: "text", of: (form) => isoText(form.autoCloseAt) },
  // JSON text: both stores read it alike inside an array.
  { name: "settings_in", type: "text", of: (form) => JSON.stringify(form.settings) },
  { name: "captcha_secret_in", type: "text", of: (form) => form.captchaSecret },
  { name: "created_at_in", type: "text", of: (form) => isoText(form.createdAt) },
];

/** The values of NEW_FORM_COLUMNS from the items of NEW_FORM_ITEM. */
export const NEW_FORM_VALUES = `id_in, organization_id_in, name_in, type_in, is_closed_in,
  auto_close_at_in::timestamptz, settings_in::jsonb, captcha_secret_in,
  created_at_in::timestamptz, created_at_in::timestamptz`;

/** A stored form, with the version of the row that was read. */
export type VersionedFormRow = FormRow & {
  /** Changes with every write of the row (PostgreSQL's `xmin`). */
  version: string;
};

/**
 * Locks the form until the transaction ends, as an update and the intake of a limited form do;
 * false when the organization has no such form. Its own statement: one that reads after it sees
 * what the writers it waited for committed (submissions counted in slots included), where a
 * statement that locks and reads at once would read as of before its wait.
 */
export async function lockForm(
  db: Queryable,
  organizationId: string,
  formId: string,
): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM forms WHERE organization_id = $1 AND id = $2 FOR NO KEY UPDATE",
    [organizationId, formId],
  );
  return rows.length > 0;
}

/** Only hosted forms are kept by the hosted pages' caches: only their changes are announced. */
export const HOSTED = "type = 'hosted'";

export async function deleteForm(
  db: Queryable,
  organizationId: string,
  formId: string,
  announcement: Announcement,
) {
  const rows = await db.query<{ listeners: number }>(
    `DELETE FROM forms WHERE organization_id = $1 AND id = $2
      RETURNING ${announceColumn(3, HOSTED)}`,
    [organizationId, formId, ...announceParams(announcement)],
  );
  announcement.listeners = rows[0]?.listeners ?? 0;
  return rows.length > 0;
}

/** Persists deadlines that have passed, so the stored switch agrees with what clients read. */
export async function closeDueForms(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query<{ id: string }>(
    `UPDATE forms SET is_closed = true, auto_close_at = NULL, revision = revision + 1
      WHERE auto_close_at <= $1 RETURNING id`,
    [now],
  );
  return rows.length;
}
