import type { Queryable } from "../db/database.ts";
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

const FORM_COLUMNS = `id, organization_id AS "organizationId", name, type,
  is_closed AS "storedIsClosed", auto_close_at AS "autoCloseAt", submissions, settings,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

// $1 is always the instant the request is answered at: a deadline at or before it has closed the form.
const READS_CLOSED = `(is_closed OR COALESCE(auto_close_at <= $1, false))`;

export async function insertForm(
  db: Queryable,
  form: Omit<FormRow, "isClosed" | "submissions"> & { captchaSecret: string },
  now: Date,
): Promise<FormRow> {
  const rows = await db.query<FormRow>(
    `INSERT INTO forms (id, organization_id, name, type, is_closed, auto_close_at, settings,
       captcha_secret, created_at, updated_at)
     VALUES ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     RETURNING ${FORM_COLUMNS}, ${READS_CLOSED} AS "isClosed"`,
    [
      now,
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
    ],
  );
  return rows[0] as FormRow;
}

/** A stored form, with the version of the row that was read. */
export type VersionedFormRow = FormRow & {
  /** Changes with every write of the row (PostgreSQL's `xmin`). */
  version: string;
};

/** The form, if it belongs to the organization. `forUpdate` locks it until the transaction ends. */
export async function findForm(
  db: Queryable,
  organizationId: string,
  formId: string,
  now: Date,
  forUpdate = false,
): Promise<VersionedFormRow | null> {
  const rows = await db.query<VersionedFormRow>(
    `SELECT ${FORM_COLUMNS}, ${READS_CLOSED} AS "isClosed", xmin::text AS version FROM forms
      WHERE organization_id = $2 AND id = $3 ${forUpdate ? "FOR UPDATE" : ""}`,
    [now, organizationId, formId],
  );
  return rows[0] ?? null;
}

export interface FormChanges {
  name: string;
  storedIsClosed: boolean;
  autoCloseAt: Date | null;
  settings: FormSettings;
  /** Undefined keeps the stored secret. */
  captchaSecret: string | undefined;
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
): Promise<FormRow | null> {
  const rows = await db.query<FormRow>(
    // updated_at moves forward even when two updates land within one millisecond.
    `UPDATE forms SET name = $4, is_closed = $5, auto_close_at = $6, settings = $7,
            captcha_secret = COALESCE($8, captcha_secret),
            updated_at = GREATEST($1, updated_at + interval '1 millisecond')
      WHERE organization_id = $2 AND id = $3 AND ($9::xid IS NULL OR xmin = $9::xid)
      RETURNING ${FORM_COLUMNS}, ${READS_CLOSED} AS "isClosed"`,
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
    ],
  );
  return rows[0] ?? null;
}

/**
 * Merges `settings` into the stored ones and sets the name and `isClosed` if given, in one
 * statement. For changes that leave the auto-close deadline alone, which needs the stored row to
 * compute. A given `isClosed` is the form's state from now on, and a deadline that has passed
 * is spent with it, as nextClosingState has it (closing.ts).
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
): Promise<FormRow | null> {
  const rows = await db.query<FormRow>(
    `UPDATE forms SET name = COALESCE($4, name), settings = settings || $5::jsonb,
            captcha_secret = COALESCE($6, captcha_secret),
            is_closed = COALESCE($7::boolean, is_closed),
            auto_close_at = CASE WHEN $7::boolean IS NOT NULL AND auto_close_at <= $1 THEN NULL
                                 ELSE auto_close_at END,
            updated_at = GREATEST($1, updated_at + interval '1 millisecond')
      WHERE organization_id = $2 AND id = $3
      RETURNING ${FORM_COLUMNS}, ${READS_CLOSED} AS "isClosed"`,
    [
      now,
      organizationId,
      formId,
      changes.name,
      changes.settings,
      changes.captchaSecret,
      changes.isClosed,
    ],
  );
  return rows[0] ?? null;
}

export async function deleteForm(db: Queryable, organizationId: string, formId: string) {
  const rows = await db.query<{ id: string }>(
    "DELETE FROM forms WHERE organization_id = $1 AND id = $2 RETURNING id",
    [organizationId, formId],
  );
  return rows.length > 0;
}

export interface ListFilter {
  organizationId: string;
  type: "endpoint" | "hosted" | null;
  /** A LIKE pattern with its wildcards already escaped, or null for no search. */
  namePattern: string | null;
}

export type ListSort = "createdAt" | "submissions";

export interface FormPage {
  /** How many forms match the filter, on every page. */
  total: number;
  rows: FormListRow[];
}

const ORDER_BY = {
  createdAt: "created_at DESC, id DESC",
  submissions: "submissions DESC, id DESC",
} as const;

const PAGE_ORDER = {
  createdAt: `p."createdAt" DESC, p.id DESC`,
  submissions: "p.submissions DESC, p.id DESC",
} as const;

const LIST_COLUMNS = `id, name, type, created_at AS "createdAt", updated_at AS "updatedAt",
  settings -> 'imageCompressionType' AS "imageCompressionType",
  ${READS_CLOSED} AS "isClosed", submissions, organization_id AS "organizationId"`;

/** Past this many rows, walking the offset in the index alone beats reading rows as it goes. */
const DEEP_OFFSET = 200n;

interface PageShape {
  byType: boolean;
  bySearch: boolean;
  /** An offset of DEEP_OFFSET or more. */
  deep: boolean;
  sort: ListSort;
}

/**
 * One statement answers a page: its total and its rows. Parameters: $1 now, $2 organization,
 * $3 type, $4 name pattern, $5 limit, $6 offset. Each shape has its own fixed statement, so
 * that a prepared plan never has to serve a shape it was not made for.
 */
function pageStatement({ byType, bySearch, deep, sort }: PageShape): string {
  // A shape without a filter still names its parameter, as NULL, so that it has a type.
  const ofType = byType ? "type = $3" : "$3::text IS NULL";
  const named = bySearch ? "name ILIKE $4" : "$4::text IS NULL";
  const where = `organization_id = $2 AND ${ofType} AND ${named}`;
  // Without a search the total is the kept count; with one it is counted, through the trigram
  // index. A page past the end reads no rows, however large its offset.
  const total = bySearch
    ? `SELECT count(*) AS total FROM forms WHERE ${where}`
    : `SELECT COALESCE(sum(count), 0) AS total FROM form_counts
        WHERE organization_id = $2 AND ${ofType}`;
  // A deep page walks its offset in the index alone and reads only its own rows from the table.
  const page =
    deep && !bySearch
      ? `SELECT ${LIST_COLUMNS} FROM forms WHERE id IN (
           SELECT id FROM forms WHERE ${where} ORDER BY ${ORDER_BY[sort]} LIMIT $5 OFFSET $6)`
      : `SELECT ${LIST_COLUMNS} FROM forms WHERE ${where}
          ORDER BY ${ORDER_BY[sort]} LIMIT $5 OFFSET $6`;
  return `SELECT t.total::int8 AS total, p.* FROM (${total}) t
    LEFT JOIN LATERAL (${page}) p ON $6::int8 < t.total
    ORDER BY ${PAGE_ORDER[sort]}`;
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
  const total = Number(rows[0]?.total ?? 0);
  // A page with no rows still answers its total, in one row of nulls.
  return { total, rows: rows[0]?.id ? rows.map(({ total: _total, ...row }) => row) : [] };
}

/** Persists deadlines that have passed, so the stored switch agrees with what clients read. */
export async function closeDueForms(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query<{ id: string }>(
    `UPDATE forms SET is_closed = true, auto_close_at = NULL
      WHERE auto_close_at <= $1 RETURNING id`,
    [now],
  );
  return rows.length;
}
