import type { Database, Queryable } from "../db/database.ts";
import { batchesPerStore, StatementBatches } from "../db/statement-batches.ts";
import { type ItemColumn, statementItems } from "../db/statement-items.ts";
import { SUBMISSIONS_SQL } from "../submissions/submission-counts.repository.ts";
import { type FormListRow, READS_CLOSED } from "./forms.repository.ts";

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

/** Where a page's statement finds the organization, the type, the pattern, the limit and offset. */
interface PageInputs {
  organization: string;
  type: string;
  pattern: string;
  limit: string;
  offset: string;
}

/** A statement of one page: $1 now, $2 organization, $3 type, $4 name pattern, $5 limit, $6 offset. */
const PARAMETERS: PageInputs = {
  organization: "$2",
  type: "$3",
  pattern: "$4",
  limit: "$5",
  offset: "$6",
};

/** A statement of several pages, none a search: each page's inputs are a row of its items. */
const ITEM_INPUTS: PageInputs = {
  organization: "item.organization_id_in",
  type: "item.type_in",
  pattern: "NULL::text",
  limit: "item.limit_in",
  offset: "item.offset_in",
};

/**
 * A page by count. The index orders forms by their folded count; counts not folded yet only ever
 * add to it (decreases go to the column at once), so the forms of this page are among the first
 * offset + limit by the folded count and those with counts still in slots: ordered again by their
 * exact count, those give the page as if every count were folded.
 */
function bySubmissionsPage(where: string, withinTotal: string, { limit, offset }: PageInputs) {
  return `SELECT ${LIST_COLUMNS} FROM forms WHERE ${withinTotal} AND id IN (
      (SELECT id FROM forms WHERE ${where}
        ORDER BY ${ORDER_BY.submissions} LIMIT ${limit}::int8 + ${offset}::int8)
      UNION
      SELECT forms.id FROM submission_count_slots c JOIN forms ON forms.id = c.form_id
       WHERE ${where})
    ORDER BY ${SUBMISSIONS_SQL} DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
}

/**
 * A page's total (`t`) and its rows (`p`, joined on the total as a nested loop, which passes the
 * page's rows on in the page's own order: sorting them again outside cost the database a fifth of
 * a small list's time). Each shape has its own fixed statement, so that a prepared plan never has
 * to serve a shape it was not made for.
 */
function pageJoin({ byType, bySearch, deep, sort }: PageShape, inputs: PageInputs): string {
  const { organization, type, pattern, limit, offset } = inputs;
  // A shape without a filter still names its input, as NULL, so that a parameter has a type.
  const ofType = byType ? `type = ${type}` : `${type}::text IS NULL`;
  // The normalized name, as the trigram index has it (migration 004); the term is normalized too.
  const named = bySearch ? `normalize(name, NFC) ILIKE ${pattern}` : `${pattern}::text IS NULL`;
  const where = `organization_id = ${organization} AND ${ofType} AND ${named}`;
  // Without a search the total is the kept count; with one it is counted, through the trigram
  // index, up to one match past its cap (to tell a capped total from an exact one).
  const total = bySearch
    ? `SELECT count(*) AS total FROM (
         SELECT 1 FROM forms WHERE ${where} LIMIT ${SEARCH_MATCH_CAP + 1}) matches`
    : `SELECT COALESCE(sum(count), 0) AS total FROM form_counts
        WHERE organization_id = ${organization} AND ${ofType}`;
  // A page past the end, or past a search's cap, reads no rows however large its offset: the
  // condition names only the total, so it is checked once, before the page's plan runs.
  const withinTotal = `${offset}::int8 < ${bySearch ? `LEAST(t.total, ${SEARCH_MATCH_CAP})` : "t.total"}`;
  // A deep page walks its offset in the index alone and reads only its own rows from the table.
  const page =
    sort === "submissions"
      ? bySubmissionsPage(where, withinTotal, inputs)
      : deep && !bySearch
        ? `SELECT ${LIST_COLUMNS} FROM forms WHERE ${withinTotal} AND id IN (
             SELECT id FROM forms WHERE ${where} ORDER BY ${ORDER_BY[sort]}
              LIMIT ${limit} OFFSET ${offset})
            ORDER BY ${ORDER_BY[sort]}`
        : `SELECT ${LIST_COLUMNS} FROM forms WHERE ${withinTotal} AND ${where}
            ORDER BY ${ORDER_BY[sort]} LIMIT ${limit} OFFSET ${offset}`;
  return `LATERAL (${total}) t LEFT JOIN LATERAL (${page}) p ON true`;
}

const pageStatement = (shape: PageShape) =>
  `SELECT t.total::int8 AS total, p.* FROM ${pageJoin(shape, PARAMETERS)}`;

const PAGE_ITEM: readonly ItemColumn<PageRequest>[] = [
  { name: "organization_id_in", type: "text", of: (page) => page.filter.organizationId },
  { name: "type_in", type: "text", of: (page) => page.filter.type },
  { name: "limit_in", type: "int", of: (page) => page.limit },
  { name: "offset_in", type: "int8", of: (page) => page.offset.toString() },
];

const shapeKey = (shape: PageShape) =>
  `${shape.byType}:${shape.bySearch}:${shape.deep}:${shape.sort}`;

/** The statements of the pages that are not batched: a search's, a deep page's. */
const PAGE_STATEMENTS = new Map(
  [false, true].flatMap((byType) =>
    [false, true].flatMap((bySearch) =>
      [false, true].flatMap((deep) =>
        (["createdAt", "submissions"] as const)
          .map((sort) => ({ byType, bySearch, deep, sort }))
          .filter((shape) => shape.bySearch || shape.deep)
          .map((shape) => [shapeKey(shape), pageStatement(shape)] as const),
      ),
    ),
  ),
);

type PageRow = FormListRow & { total: string };

/** A page as its statement's rows give it: a page with no rows still has one, of nulls. */
function pageOf(rows: PageRow[], bySearch: boolean): FormPage {
  const counted = Number(rows[0]?.total ?? 0);
  const capped = bySearch && counted > SEARCH_MATCH_CAP;
  return {
    total: capped ? SEARCH_MATCH_CAP : counted,
    capped,
    rows: rows[0]?.id ? rows.map(({ total: _total, ...row }) => row) : [],
  };
}

interface PageRequest {
  filter: ListFilter;
  limit: number;
  offset: bigint;
}

/**
 * The pages of a batch (statement-batches.ts): the lists that arrive together share one
 * statement, each page still read by its own plan.
 */
async function listFormPages(
  db: Queryable,
  pagesOfShape: string,
  requests: PageRequest[],
): Promise<FormPage[]> {
  const item = statementItems(PAGE_ITEM, requests, 2, true);
  const rows = await db.query<PageRow & { n: number }>(
    `SELECT item.n::int AS n, t.total::int8 AS total, p.*
       FROM ${item.relation} CROSS JOIN ${pagesOfShape}`,
    [new Date(), ...item.params],
  );
  const byItem: PageRow[][] = requests.map(() => []);
  for (const { n, ...row } of rows) byItem[n - 1]?.push(row);
  return byItem.map((pageRows) => pageOf(pageRows, false));
}

/** Statements of several pages, one per shape that is neither a search nor deep. */
const pageBatches = batchesPerStore((db) => {
  const batches = new Map<string, StatementBatches<PageRequest, FormPage>>();
  for (const byType of [false, true]) {
    for (const sort of ["createdAt", "submissions"] as const) {
      const shape = { byType, bySearch: false, deep: false, sort };
      // Made once, as PAGE_STATEMENTS are: a statement of the shape only differs by its items.
      const pagesOfShape = pageJoin(shape, ITEM_INPUTS);
      batches.set(
        shapeKey(shape),
        new StatementBatches(
          (requests: PageRequest[]) => listFormPages(db, pagesOfShape, requests),
          { maxItems: 50 },
        ),
      );
    }
  }
  return batches;
});

/**
 * A page of the organization's forms and their total. A list that is neither a search nor a deep
 * page goes with the lists of its shape that arrive together (statement-batches.ts); a search or
 * a deep page, whose plan depends on its term or is long, has a statement of its own.
 */
export async function listFormPage(
  db: Database,
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
  if (!shape.bySearch && !shape.deep) {
    const batches = pageBatches(db).get(shapeKey(shape)) as StatementBatches<PageRequest, FormPage>;
    return batches.submit({ filter, limit, offset });
  }
  const statement = PAGE_STATEMENTS.get(shapeKey(shape)) as string;
  const rows = await db.query<PageRow>(
    statement,
    [now, filter.organizationId, filter.type, filter.namePattern, limit, offset.toString()],
    // A plan made for a selective term would walk the whole trigram index for a short one.
    { planEachTime: filter.namePattern !== null },
  );
  return pageOf(rows, shape.bySearch);
}
