import { stringify } from "csv-stringify/sync";

/** Spreadsheets read a file as UTF-8 when it starts with a byte order mark. */
export const BYTE_ORDER_MARK = "\uFEFF";

// RFC 4180: CRLF after every record, a field quoted when it holds a comma, a quote or a line
// break. A cell that a spreadsheet would run as a formula (=, +, -, @, tab, carriage return, and
// the full-width look-alikes some spreadsheets fold into them) starts with `'`.
const OPTIONS = {
  record_delimiter: "\r\n",
  // Not its default once the delimiter is set: a lone LF or CR would go unquoted.
  quote_record_delimiter: true,
  escape_formulas: true,
} as const;

/** CSV records, each ending with CRLF. Every cell is text: nothing is cast. */
export function csvRecords(records: readonly (readonly string[])[]): string {
  return stringify(records as string[][], OPTIONS);
}

/**
 * An answer value as one cell: text as it is, a list of texts joined by `; ` (as file names
 * are), nothing for null or a missing answer, any other JSON value as its JSON text.
 */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) {
    return value.join("; ");
  }
  return JSON.stringify(value);
}
