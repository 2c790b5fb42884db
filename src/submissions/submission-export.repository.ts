import type { Queryable } from "../db/database.ts";
import {
  filterConditions,
  filterParameters,
  type SubmissionFilter,
} from "./submission-list.repository.ts";
import { SUBMISSION_COLUMNS, type SubmissionRow } from "./submissions.repository.ts";

/**
 * A place in the export's order (newest first, id as tie-breaker). The instant is text with
 * microseconds: a JS Date keeps milliseconds, and a cursor rounded to them could skip or repeat
 * rows stored with finer times.
 */
export interface ExportCursor {
  createdAt: string;
  id: string;
}

const CURSOR_TEXT = `to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

// Parameters: $1 organization, $2 form, $3 spam, $4–$6 the filters, then the statement's own.
const selected = (bySearch: boolean) =>
  `s.form_id = $2 AND s.is_spam = $3 AND ${filterConditions(bySearch)}
   AND EXISTS (SELECT 1 FROM forms f WHERE f.organization_id = $1 AND f.id = $2)`;

const parameters = (filter: SubmissionFilter) => [
  filter.organizationId,
  filter.formId,
  filter.isSpam,
  ...filterParameters(filter),
];

/**
 * Where the export starts: the newest submission the filter selects now, or null when there is
 * none. Undefined when the organization has no such form.
 */
export async function exportStart(
  db: Queryable,
  filter: SubmissionFilter,
): Promise<ExportCursor | null | undefined> {
  const bySearch = filter.searchPattern !== null;
  const rows = await db.query<{ formId: string; createdAt: string | null; id: string | null }>(
    `SELECT f.id AS "formId", newest."createdAt", newest.id FROM forms f
       LEFT JOIN LATERAL (
         SELECT ${CURSOR_TEXT} AS "createdAt", s.id FROM submissions s WHERE ${selected(bySearch)}
          ORDER BY s.created_at DESC, s.id DESC LIMIT 1) newest ON true
      WHERE f.organization_id = $1 AND f.id = $2`,
    parameters(filter),
    { planEachTime: bySearch },
  );
  const row = rows[0];
  if (!row) return undefined;
  return row.id === null ? null : { createdAt: row.createdAt as string, id: row.id };
}

/**
 * The answer ids of the selected submissions up to `start`, each sequence once, in order of
 * first appearance (oldest first; sequences first seen at the same instant in their own order).
 * Grouping by the whole sequence keeps the pass to one hash of a few groups, however many rows.
 */
export async function answerIdSequences(
  db: Queryable,
  filter: SubmissionFilter,
  start: ExportCursor,
): Promise<string[][]> {
  const bySearch = filter.searchPattern !== null;
  const rows = await db.query<{ ids: string[] }>(
    `SELECT ids FROM (
       SELECT jsonb_path_query_array(s.answers, '$[*].id') AS ids, min(s.created_at) AS first
         FROM submissions s
        WHERE ${selected(bySearch)} AND (s.created_at, s.id) <= ($7::timestamptz, $8::text)
        GROUP BY 1) sequences
      ORDER BY first, ids`,
    [...parameters(filter), start.createdAt, start.id],
    { planEachTime: bySearch },
  );
  return rows.map((row) => row.ids);
}

/** What a CSV record shows of a submission. */
export type CsvSubmissionRow = Pick<
  SubmissionRow,
  "id" | "isSpam" | "answers" | "files" | "createdAt"
>;

/** The rows of each format: a CSV record shows five columns, an NDJSON line the whole record. */
interface ExportedRows {
  csv: CsvSubmissionRow;
  ndjson: SubmissionRow;
}

export type ExportFormat = keyof ExportedRows;

export type ExportRow<F extends ExportFormat> = ExportedRows[F] & { cursor: string };

// Only what the format writes: the metadata, the update instant and the rest are read, sent,
// parsed and collected for nothing by a CSV export of a million rows.
const EXPORTED_COLUMNS: Record<ExportFormat, string> = {
  csv: `s.id, s.is_spam AS "isSpam", s.answers, s.files, s.created_at AS "createdAt"`,
  ndjson: SUBMISSION_COLUMNS,
};

/**
 * The next `limit` selected submissions after `after` (or from `after` on, when `inclusive`):
 * a keyset walk down the form's index, never an offset.
 */
export async function exportBatch<F extends ExportFormat>(
  db: Queryable,
  format: F,
  filter: SubmissionFilter,
  after: ExportCursor,
  inclusive: boolean,
  limit: number,
): Promise<ExportRow<F>[]> {
  const bySearch = filter.searchPattern !== null;
  return db.query<ExportRow<F>>(
    `SELECT ${EXPORTED_COLUMNS[format]}, ${CURSOR_TEXT} AS cursor FROM submissions s
      WHERE ${selected(bySearch)}
        AND (s.created_at, s.id) ${inclusive ? "<=" : "<"} ($7::timestamptz, $8::text)
      ORDER BY s.created_at DESC, s.id DESC LIMIT $9`,
    [...parameters(filter), after.createdAt, after.id, limit],
    { planEachTime: bySearch },
  );
}
