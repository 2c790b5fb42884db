/** Spreadsheets read a file as UTF-8 when it starts with a byte order mark. */
export const BYTE_ORDER_MARK = "\uFEFF";

// RFC 4180: CRLF after every record, a cell quoted when it holds a comma, a quote or a line
// break (a lone LF or CR too), its quotes doubled. A cell that a spreadsheet would run as a
// formula (=, +, -, @, tab, carriage return, and the full-width look-alikes some spreadsheets
// fold into them) starts with `'`. These are the rules csv-stringify applied with
// `record_delimiter: "\r\n"`, `quote_record_delimiter` and `escape_formulas`; its generic path
// allocated about 6 KB per exported row (a tuple and an array of separators per cell), most of
// what the export's heap churned through.
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell as CSV: escaped when it would start a formula, quoted when it must be. */
export function csvCell(text: string): string {
  const cell = FORMULA_START.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** CSV records, each ending with CRLF. Every cell is text: nothing is cast. */
export function csvRecords(records: readonly (readonly string[])[]): string {
  let text = "";
  for (const record of records) text += `${record.map(csvCell).join(",")}\r\n`;
  return text;
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
