import { Readable } from "node:stream";
import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Queryable } from "../db/database.ts";
import type { FileLinks } from "../files/file-links.ts";
import { formNotFound } from "../http/errors.ts";
import { BYTE_ORDER_MARK, cellText, csvCell, csvRecords } from "./csv.ts";
import {
  answerIdSequences,
  type ExportCursor,
  type ExportFormat,
  type ExportRow,
  exportBatch,
  exportStart,
} from "./submission-export.repository.ts";
import type { SubmissionFilter } from "./submission-list.repository.ts";
import type { ExportSubmissionsParams } from "./submissions.schemas.ts";
import { filterOf, type LinkOf, toSubmissionRecord } from "./submissions.service.ts";

/** Rows per query: large enough that round trips cost little, small enough to hold at once. */
export const EXPORT_BATCH_SIZE = 1_000;

const CONTENT_TYPES = {
  csv: "text/csv; charset=utf-8",
  ndjson: "application/x-ndjson; charset=utf-8",
} as const;

export interface SubmissionExport {
  contentType: string;
  filename: string;
  /** Produces one batch at a time, when the client has taken the previous one. */
  body: Readable;
}

/**
 * The selected submissions, newest first, one batch per query from `first` (the batch at the
 * start) down. The query of the next batch is sent as soon as a batch arrives, so that the
 * database reads it while this one is written out.
 */
async function* batches<F extends ExportFormat>(
  db: Queryable,
  format: F,
  filter: SubmissionFilter,
  first: Promise<ExportRow<F>[]>,
  batchSize: number,
): AsyncGenerator<ExportRow<F>[]> {
  let batch = await first;
  for (;;) {
    const last = batch.at(-1);
    const next =
      last && batch.length === batchSize
        ? exportBatch(db, format, filter, { createdAt: last.cursor, id: last.id }, false, batchSize)
        : null;
    // Awaited below, unless the client goes away first: its failure must not go unheard then.
    next?.catch(() => {});
    if (batch.length > 0) yield batch;
    if (!next) return;
    batch = await next;
  }
}

/** The batches from `start` on (none without one), the first one's query sent now. */
function rowsFrom<F extends ExportFormat>(
  db: Queryable,
  format: F,
  filter: SubmissionFilter,
  start: ExportCursor | null,
  batchSize: number,
): AsyncGenerator<ExportRow<F>[]> | null {
  if (!start) return null;
  const first = exportBatch(db, format, filter, start, true, batchSize);
  first.catch(() => {});
  return batches(db, format, filter, first, batchSize);
}

/** Every answer id once, in order of first appearance. */
function columnsOf(sequences: readonly string[][]): string[] {
  const columns = new Set<string>();
  for (const ids of sequences) for (const id of ids) columns.add(id);
  return [...columns];
}

/** The row's CSV record, written cell by cell into one string: no array of cells per row. */
function csvLine(row: ExportRow<"csv">, columns: readonly string[]): string {
  const values = new Map<string, unknown>();
  for (const answer of row.answers) if (!values.has(answer.id)) values.set(answer.id, answer.value);
  let line = `${csvCell(row.id)},${csvCell(row.createdAt.toISOString())},${csvCell(String(row.isSpam))}`;
  for (const column of columns) line += `,${csvCell(cellText(values.get(column)))}`;
  return `${line},${csvCell(cellText(row.files.map((file) => file.name).join("; ")))}\r\n`;
}

async function* csvChunks(
  rows: AsyncGenerator<ExportRow<"csv">[]> | null,
  columns: readonly string[],
): AsyncGenerator<string> {
  yield BYTE_ORDER_MARK + csvRecords([["id", "createdAt", "isSpam", ...columns, "files"]]);
  if (!rows) return;
  for await (const batch of rows) {
    let text = "";
    for (const row of batch) text += csvLine(row, columns);
    yield text;
  }
}

async function* ndjsonChunks(
  rows: AsyncGenerator<ExportRow<"ndjson">[]> | null,
  linkOf: LinkOf,
): AsyncGenerator<string> {
  if (!rows) return;
  for await (const batch of rows) {
    yield `${batch.map((row) => JSON.stringify(toSubmissionRecord(row, linkOf))).join("\n")}\n`;
  }
}

/**
 * The export of the submissions the query selects. Whether the form exists and, for CSV, the
 * columns are known before the first byte is sent; the rows then follow in keyset batches, so
 * memory stays the same whatever their number. The export holds what the filter selected when it
 * started: a submission that arrives meanwhile is newer than its first row and is left out, so
 * every exported row has its columns.
 */
export async function exportSubmissions(
  db: Queryable,
  links: FileLinks,
  owner: KeyOwner,
  formId: string,
  params: ExportSubmissionsParams,
  batchSize = EXPORT_BATCH_SIZE,
): Promise<SubmissionExport> {
  const filter = filterOf(owner, formId, params);
  const start = await exportStart(db, filter);
  if (start === undefined) throw formNotFound();
  const format = params.format ?? "csv";
  // The first batch is read while the columns are gathered.
  const chunks =
    format === "csv"
      ? csvChunks(
          rowsFrom(db, "csv", filter, start, batchSize),
          start ? columnsOf(await answerIdSequences(db, filter, start)) : [],
        )
      : ndjsonChunks(rowsFrom(db, "ndjson", filter, start, batchSize), await links.signer());
  return {
    contentType: CONTENT_TYPES[format],
    filename: `${formId}-submissions.${format}`,
    // Not object mode: the stream holds about one batch, and asks for the next once it is read.
    body: Readable.from(chunks, { objectMode: false }),
  };
}
