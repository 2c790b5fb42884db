import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import fc from "fast-check";
import { cellText, csvRecords } from "../../src/submissions/csv.ts";

// What a spreadsheet would run as a formula, with the full-width look-alikes some fold into them.
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** The text a reader gets back for `cell`: itself, or itself after a `'`. */
const escaped = (cell: string) => (FORMULA_START.test(cell) ? `'${cell}` : cell);

// The parser finds the record delimiter itself: a line break left unquoted would end a record.
const readBack = (text: string): string[][] => parse(text);

// Cells made of the characters that matter to CSV, to spreadsheets and to Unicode.
const cell = fc.oneof(
  fc.string({
    unit: fc.constantFrom(",", '"', "\n", "\r", "=", "+", "-", "@", "\t", " ", "a", "é"),
  }),
  fc.string({ unit: "grapheme" }),
  fc.string(),
);

test("any cells round-trip through a standard CSV parser, formula cells escaped", () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(cell, { minLength: 3, maxLength: 3 }), { minLength: 1 }),
      (records) => {
        const text = csvRecords(records);
        assert.ok(text.endsWith("\r\n"));
        const read = readBack(text);
        assert.deepEqual(
          read,
          records.map((record) => record.map(escaped)),
        );
        for (const row of read) {
          for (const value of row) assert.ok(!FORMULA_START.test(value) || value.startsWith("'"));
        }
      },
    ),
    { numRuns: 500 },
  );
});

// The options the export's CSV was written with by csv-stringify, whose bytes it keeps.
const CSV_STRINGIFY_OPTIONS = {
  record_delimiter: "\r\n",
  quote_record_delimiter: true,
  escape_formulas: true,
} as const;

test("the same bytes as csv-stringify with the options the export had", () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { minLength: 1 }),
      (records) => {
        assert.equal(csvRecords(records), stringify(records, CSV_STRINGIFY_OPTIONS));
      },
    ),
    { numRuns: 2_000 },
  );
});

test("one record per CRLF; quotes doubled inside quoted fields", () => {
  assert.equal(
    csvRecords([
      ["plain", 'say "hi"', "a,b"],
      ["line\nbreak", "=1+1", "-5"],
    ]),
    'plain,"say ""hi""","a,b"\r\n"line\nbreak",\'=1+1,\'-5\r\n',
  );
});

test("answer values as cells", () => {
  assert.equal(cellText("text"), "text");
  assert.equal(cellText(["a", "b"]), "a; b");
  assert.equal(cellText(undefined), "");
  assert.equal(cellText(null), "");
  assert.equal(cellText(12.5), "12.5");
  assert.equal(cellText(false), "false");
  assert.equal(cellText([1, "b"]), '[1,"b"]');
  assert.equal(cellText({ a: { b: [] } }), '{"a":{"b":[]}}');
});
