import type { Queryable } from "../db/database.ts";
import { SUBMISSION_COLUMNS, type SubmissionRow } from "./submissions.repository.ts";

/** What a list or an export selects within one form. */
export interface SubmissionFilter {
  organizationId: string;
  formId: string;
  isSpam: boolean;
  /** A LIKE pattern with its wildcards already escaped, or null for no search. */
  searchPattern: string | null;
  /** createdAt at or after it, or null. */
  since: Date | null;
  /** createdAt before it, or null. */
  until: Date | null;
}

/**
 * The conditions of a filter on `submissions s` other than the form and the spam state.
 * Parameters: $4 search pattern, $5 since, $6 until. Without a search the pattern is still
 * named, as NULL, so that it has a type; missing bounds are infinite, so that one statement
 * serves every range.
 */
export function filterConditions(bySearch: boolean): string {
  const searched = bySearch ? "s.search_text ILIKE $4" : "$4::text IS NULL";
  return `${searched}
    AND s.created_at >= COALESCE($5::timestamptz, '-infinity')
    AND s.created_at < COALESCE($6::timestamptz, 'infinity')`;
}

export function filterParameters(filter: SubmissionFilter) {
  return [filter.searchPattern, filter.since, filter.until];
}

export interface SubmissionPage {
  /** Submissions the filters match, not spam and spam: undefined when the form is missing. */
  totals: { inbox: number; spam: number } | undefined;
  rows: SubmissionRow[];
}

/** Past this many rows, walking the offset in the index alone beats reading rows as it goes. */
const DEEP_OFFSET = 200n;

interface PageShape {
  bySearch: boolean;
  byDates: boolean;
  deep: boolean;
}

const ORDER = "s.created_at DESC, s.id DESC";

/** The submission columns of the page, and the totals. $3 spam, $7 limit, $8 offset. */
const SELECT_PAGE = (page: string) =>
  `SELECT t.inbox::int8 AS "totalInbox", t.spam::int8 AS "totalSpam", p.*
     FROM t LEFT JOIN LATERAL (${page}) p ON $8::int8 < CASE WHEN $3 THEN t.spam ELSE t.inbox END
    ORDER BY p."createdAt" DESC, p.id DESC`;

/**
 * A search reads the trigram index once: the matches are counted by spam state, and the page is
 * taken from the same matches.
 */
const SEARCH_PAGE = `WITH matched AS MATERIALIZED (
    SELECT s.id, s.is_spam, s.created_at FROM submissions s
     WHERE s.form_id = $2 AND ${filterConditions(true)}),
  t AS MATERIALIZED (
    SELECT count(m.id) FILTER (WHERE NOT m.is_spam) AS inbox,
           count(m.id) FILTER (WHERE m.is_spam) AS spam
      FROM forms f LEFT JOIN matched m ON true
     WHERE f.organization_id = $1 AND f.id = $2 GROUP BY f.id)
  ${SELECT_PAGE(`SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE s.id IN (
      SELECT s.id FROM matched s WHERE s.is_spam = $3 ORDER BY ${ORDER} LIMIT $7 OFFSET $8)`)}`;

/**
 * One statement answers a page: whether the form is the organization's, the totals and the rows.
 * Parameters: $1 organization, $2 form, $3 spam, $4–$6 the filters, $7 limit, $8 offset.
 */
function pageStatement({ bySearch, byDates, deep }: PageShape): string {
  if (bySearch) return SEARCH_PAGE;
  const where = `s.form_id = $2 AND s.is_spam = $3 AND ${filterConditions(false)}`;
  // Unfiltered totals are the kept counts; a date range counts each state's range of the index.
  // Materialized: inlined, the counts would run again for every row of the page.
  const counted = (spam: string) =>
    `(SELECT count(*) FROM submissions s WHERE s.form_id = f.id AND s.is_spam = ${spam}
        AND ${filterConditions(false)})`;
  const totals = byDates
    ? `SELECT ${counted("false")} AS inbox, ${counted("true")} AS spam
         FROM forms f WHERE f.organization_id = $1 AND f.id = $2`
    : `SELECT COALESCE(sum(c.count) FILTER (WHERE NOT c.is_spam), 0) AS inbox,
              COALESCE(sum(c.count) FILTER (WHERE c.is_spam), 0) AS spam
         FROM forms f LEFT JOIN submission_counts c ON c.form_id = f.id
        WHERE f.organization_id = $1 AND f.id = $2 GROUP BY f.id`;
  // A deep page walks its offset in the index alone and reads only its own rows from the table.
  const page = deep
    ? `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE s.id IN (
         SELECT s.id FROM submissions s WHERE ${where} ORDER BY ${ORDER} LIMIT $7 OFFSET $8)`
    : `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE ${where}
        ORDER BY ${ORDER} LIMIT $7 OFFSET $8`;
  return `WITH t AS MATERIALIZED (${totals}) ${SELECT_PAGE(page)}`;
}

const shapeKey = (shape: PageShape) => `${shape.bySearch}:${shape.byDates}:${shape.deep}`;

const PAGE_STATEMENTS = new Map(
  [false, true].flatMap((bySearch) =>
    [false, true].flatMap((byDates) =>
      [false, true].map((deep) => {
        const shape = { bySearch, byDates, deep };
        return [shapeKey(shape), pageStatement(shape)] as const;
      }),
    ),
  ),
);

export async function listSubmissionPage(
  db: Queryable,
  filter: SubmissionFilter,
  limit: number,
  offset: bigint,
): Promise<SubmissionPage> {
  const shape = {
    bySearch: filter.searchPattern !== null,
    byDates: filter.since !== null || filter.until !== null,
    deep: offset >= DEEP_OFFSET,
  };
  const rows = await db.query<SubmissionRow & { totalInbox: string; totalSpam: string }>(
    PAGE_STATEMENTS.get(shapeKey(shape)) as string,
    [
      filter.organizationId,
      filter.formId,
      filter.isSpam,
      ...filterParameters(filter),
      limit,
      offset.toString(),
    ],
    // A plan made for a selective term would walk the whole trigram index for a short one.
    { planEachTime: shape.bySearch },
  );
  const first = rows[0];
  if (!first) return { totals: undefined, rows: [] };
  const totals = { inbox: Number(first.totalInbox), spam: Number(first.totalSpam) };
  // A page with no rows still answers its totals, in one row of nulls.
  const page = first.id
    ? rows.map(({ totalInbox: _inbox, totalSpam: _spam, ...row }) => row as SubmissionRow)
    : [];
  return { totals, rows: page };
}
