import type { Queryable } from "../db/database.ts";
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
const WRITTEN_COLUMNS = `id, organization_id AS "organizationId", name, type,
  is_closed AS "storedIsClosed", auto_close_at AS "autoCloseAt", settings,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const FORM_COLUMNS = `${WRITTEN_COLUMNS}, ${SUBMISSIONS_SQL} AS submissions`;

/** A written form: its record, without the count of submissions (which the write did not read). */
export type WrittenFormRow = Omit<FormRow, "submissions">;

// $1 is always the instant the request is answered at: a deadline at or before it has closed the
// form. So has a limit of responses that the count has reached (submissions.md section 3).
export const READS_CLOSED = `(is_closed OR COALESCE(auto_close_at <= $1, false)
  OR COALESCE((settings ->> 'limitResponses')::boolean
    AND ${SUBMISSIONS_SQL} >= (settings ->> 'maxResponses')::int, false))`;

/** What a create inserts: the record's columns, and the captcha's secret, never read back. */
export type NewFormRow = Omit<FormRow, "isClosed" | "submissions"> & { captchaSecret: string };

/** The columns a create writes, in the order of `newFormValues`. */
export const NEW_FORM_COLUMNS = `id, organization_id, name, type, is_closed, auto_close_at,
  settings, captcha_secret, created_at, updated_at`;

/** The parameters of NEW_FORM_COLUMNS: both creates (with a key and without) write the same. */
export const newFormValues = (form: NewFormRow) => [
  form.id,
  form.organizationId,
  form.name,
  form.type,
  form.storedIsClosed,
  form.autoCloseAt,
  form.settings,
  form.captchaSecret,
  form.createdAt,
  form.updatedAt,
];

export async function insertForm(
  db: Queryable,
  form: NewFormRow,
  now: Date,
): Promise<WrittenFormRow> {
  const rows = await db.query<WrittenFormRow>(
    `INSERT INTO forms (${NEW_FORM_COLUMNS})
     VALUES ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed"`,
    [now, ...newFormValues(form)],
  );
  return rows[0] as WrittenFormRow;
}

/** A stored form, with the version of the row that was read. */
export type VersionedFormRow = FormRow & {
  /** Changes with every write of the row (PostgreSQL's `xmin`). */
  version: string;
};

/** The form, if it belongs to the organization. */
export async function findForm(
  db: Queryable,
  organizationId: string,
  formId: string,
  now: Date,
): Promise<VersionedFormRow | null> {
  const rows = await db.query<VersionedFormRow>(
    `SELECT ${FORM_COLUMNS}, ${READS_CLOSED} AS "isClosed", xmin::text AS version FROM forms
      WHERE organization_id = $2 AND id = $3`,
    [now, organizationId, formId],
  );
  return rows[0] ?? null;
}

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

export interface FormChanges {
  name: string;
  storedIsClosed: boolean;
  autoCloseAt: Date | null;
  settings: FormSettings;
  /** Undefined keeps the stored secret. */
  captchaSecret: string | undefined;
}

/** Only hosted forms are kept by the hosted pages' caches: only their changes are announced. */
const HOSTED = "type = 'hosted'";

/** A written row, and how many instances must confirm the announcement the write carried. */
type Announced = WrittenFormRow & { listeners: number };

/** The hosted pages' caches learn of the write from the statement itself (form-changes.ts). */
function announced(rows: Announced[], announcement: Announcement): WrittenFormRow | null {
  const row = rows[0];
  if (!row) return null;
  const { listeners, ...form } = row;
  announcement.listeners = listeners;
  return form;
}

/**
 * Writes the changes, if the row is still at `version` (null: whatever its version, for a row
 * locked by the caller). Null when it was changed or deleted since it was read.
 */
export async function updateForm(
  db: Queryable,
  organizationId: string,
  formId: string,
  version: string | null,
  changes: FormChanges,
  now: Date,
  announcement: Announcement,
): Promise<WrittenFormRow | null> {
  const rows = await db.query<Announced>(
    // updated_at moves forward even when two updates land within one millisecond.
    `UPDATE forms SET name = $4, is_closed = $5, auto_close_at = $6, settings = $7,
            captcha_secret = COALESCE($8, captcha_secret), revision = revision + 1,
            updated_at = GREATEST($1, updated_at + interval '1 millisecond')
      WHERE organization_id = $2 AND id = $3 AND ($9::xid IS NULL OR xmin = $9::xid)
      RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed", ${announceColumn(10, HOSTED)}`,
    [
      now,
      organizationId,
      formId,
      changes.name,
      changes.storedIsClosed,
      changes.autoCloseAt,
      changes.settings,
      changes.captchaSecret ?? null,
      version,
      ...announceParams(announcement),
    ],
  );
  return announced(rows, announcement);
}

/**
 * Merges `settings` into the stored ones and sets the name and `isClosed` if given, in one
 * statement: for changes that leave the auto-close deadline alone, which needs the stored row to
 * compute. A given `isClosed` is the switch from now on, and a deadline that has passed is spent
 * with it, as nextClosingState has it (closing.ts). Reopening (`isClosed: false`) a form whose
 * settings after the change limit its responses is left alone (null, as for a missing form): only
 * a count read under the form's lock can tell whether the limit still holds (see lockForm).
 */
export async function patchForm(
  db: Queryable,
  organizationId: string,
  formId: string,
  changes: {
    name: string | null;
    settings: Partial<FormSettings>;
    captchaSecret: string | null;
    isClosed: boolean | null;
  },
  now: Date,
  announcement: Announcement,
): Promise<WrittenFormRow | null> {
  const rows = await db.query<Announced>(
    `UPDATE forms SET name = COALESCE($4, name), settings = settings || $5::jsonb,
            captcha_secret = COALESCE($6, captcha_secret),
            is_closed = COALESCE($7, is_closed),
            auto_close_at = CASE WHEN $7 IS NOT NULL AND auto_close_at <= $1 THEN NULL
                                 ELSE auto_close_at END,
            revision = revision + 1,
            updated_at = GREATEST($1, updated_at + interval '1 millisecond')
      WHERE organization_id = $2 AND id = $3
        -- IS FALSE: a rename or a closing decides here without merging the settings again.
        AND NOT COALESCE($7::boolean IS FALSE
          AND ((settings || $5::jsonb) ->> 'limitResponses')::boolean
          AND (settings || $5::jsonb) ->> 'maxResponses' IS NOT NULL, false)
      RETURNING ${WRITTEN_COLUMNS}, ${READS_CLOSED} AS "isClosed", ${announceColumn(8, HOSTED)}`,
    [
      now,
      organizationId,
      formId,
      changes.name,
      changes.settings,
      changes.captchaSecret,
      changes.isClosed,
      ...announceParams(announcement),
    ],
  );
  return announced(rows, announcement);
}

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

export interface ListFilter {
  organizationId: string;
  type: "endpoint" | "hosted" | null;
  /** A LIKE pattern in NFC with its wildcards already escaped, or null for no search. */
  namePattern: string | null;
}

export type ListSort = "createdAt" | "submissions";

export interface FormPage {
  /** How many forms match the filter, on every page; at most SEARCH_MATCH_CAP for a search. */
  total: number;
  /** A search that matches more than SEARCH_MATCH_CAP forms: `total` is the cap. */
  capped: boolean;
  rows: FormListRow[];
}

/**
 * A search counts and pages through at most this many matches: its cost grows with them, and
 * one organization's search for a common word must not hold the store for the others.
 */
export const SEARCH_MATCH_CAP = 10_000;

// `forms.submissions`: the folded column, which the index holds (a bare `submissions` would name
// the exact count in the select list).
const ORDER_BY = {
  createdAt: "created_at DESC, id DESC",
  submissions: "forms.submissions DESC, id DESC",
} as const;

const LIST_COLUMNS = `id, name, type, created_at AS "createdAt", updated_at AS "updatedAt",
  settings -> 'imageCompressionType' AS "imageCompressionType",
  ${READS_CLOSED} AS "isClosed", ${SUBMISSIONS_SQL} AS submissions,
  organization_id AS "organizationId"`;

/** Past this many rows, walking the offset in the index alone beats reading rows as it goes. */
export const DEEP_OFFSET = 200n;

interface PageShape {
  byType: boolean;
  bySearch: boolean;
  /** An offset of DEEP_OFFSET or more. */
  deep: boolean;
  sort: ListSort;
}

/**
 * A page by count. The index orders forms by their folded count; counts not folded yet only ever
 * add to it (decreases go to the column at once), so the forms of this page are among the first
 * offset + limit by the folded count and those with counts still in slots: ordered again by their
 * exact count, those give the page as if every count were folded.
 */
function bySubmissionsPage(where: string, withinTotal: string): string {
  return `SELECT ${LIST_COLUMNS} FROM forms WHERE ${withinTotal} AND id IN (
      (SELECT id FROM forms WHERE ${where}
        ORDER BY ${ORDER_BY.submissions} LIMIT $5::int8 + $6::int8)
      UNION
      SELECT forms.id FROM submission_count_slots c JOIN forms ON forms.id = c.form_id
       WHERE ${where})
    ORDER BY ${SUBMISSIONS_SQL} DESC, id DESC LIMIT $5 OFFSET $6`;
}

/**
 * One statement answers a page: its total and its rows. Parameters: $1 now, $2 organization,
 * $3 type, $4 name pattern, $5 limit, $6 offset. Each shape has its own fixed statement, so
 * that a prepared plan never has to serve a shape it was not made for.
 */
function pageStatement({ byType, bySearch, deep, sort }: PageShape): string {
  // A shape without a filter still names its parameter, as NULL, so that it has a type.
  const ofType = byType ? "type = $3" : "$3::text IS NULL";
  // The normalized name, as the trigram index has it (migration 004); the term is normalized too.
  const named = bySearch ? "normalize(name, NFC) ILIKE $4" : "$4::text IS NULL";
  const where = `organization_id = $2 AND ${ofType} AND ${named}`;
  // Without a search the total is the kept count; with one it is counted, through the trigram
  // index, up to one match past its cap (to tell a capped total from an exact one).
  const total = bySearch
    ? `SELECT count(*) AS total FROM (
         SELECT 1 FROM forms WHERE ${where} LIMIT ${SEARCH_MATCH_CAP + 1}) matches`
    : `SELECT COALESCE(sum(count), 0) AS total FROM form_counts
        WHERE organization_id = $2 AND ${ofType}`;
  // A page past the end, or past a search's cap, reads no rows however large its offset: the
  // condition names only the total, so it is checked once, before the page's plan runs.
  const withinTotal = `$6::int8 < ${bySearch ? `LEAST(t.total, ${SEARCH_MATCH_CAP})` : "t.total"}`;
  // A deep page walks its offset in the index alone and reads only its own rows from the table.
  const page =
    sort === "submissions"
      ? bySubmissionsPage(where, withinTotal)
      : deep && !bySearch
        ? `SELECT ${LIST_COLUMNS} FROM forms WHERE ${withinTotal} AND id IN (
             SELECT id FROM forms WHERE ${where} ORDER BY ${ORDER_BY[sort]} LIMIT $5 OFFSET $6)
            ORDER BY ${ORDER_BY[sort]}`
        : `SELECT ${LIST_COLUMNS} FROM forms WHERE ${withinTotal} AND ${where}
            ORDER BY ${ORDER_BY[sort]} LIMIT $5 OFFSET $6`;
  // No ORDER BY outside: the page names the total, so it is joined as a nested loop on the one
  // total row, which passes the page's rows on in the page's own order. Sorting them again cost
  // the database a fifth of a small list's time.
  return `SELECT t.total::int8 AS total, p.* FROM (${total}) t
    LEFT JOIN LATERAL (${page}) p ON true`;
}

const shapeKey = (shape: PageShape) =>
  `${shape.byType}:${shape.bySearch}:${shape.deep}:${shape.sort}`;

const PAGE_STATEMENTS = new Map(
  [false, true].flatMap((byType) =>
    [false, true].flatMap((bySearch) =>
      [false, true].flatMap((deep) =>
        (["createdAt", "submissions"] as const).map((sort) => {
          const shape = { byType, bySearch, deep, sort };
          return [shapeKey(shape), pageStatement(shape)] as const;
        }),
      ),
    ),
  ),
);

export async function listFormPage(
  db: Queryable,
  filter: ListFilter,
  sort: ListSort,
  limit: number,
  offset: bigint,
  now: Date,
): Promise<FormPage> {
  const shape = {
    byType: filter.type !== null,
    bySearch: filter.namePattern !== null,
    deep: offset >= DEEP_OFFSET,
    sort,
  };
  const statement = PAGE_STATEMENTS.get(shapeKey(shape)) as string;
  const rows = await db.query<FormListRow & { total: string }>(
    statement,
    [now, filter.organizationId, filter.type, filter.namePattern, limit, offset.toString()],
    // A plan made for a selective term would walk the whole trigram index for a short one.
    { planEachTime: filter.namePattern !== null },
  );
  const counted = Number(rows[0]?.total ?? 0);
  const capped = shape.bySearch && counted > SEARCH_MATCH_CAP;
  return {
    total: capped ? SEARCH_MATCH_CAP : counted,
    capped,
    // A page with no rows still answers its total, in one row of nulls.
    rows: rows[0]?.id ? rows.map(({ total: _total, ...row }) => row) : [],
  };
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
