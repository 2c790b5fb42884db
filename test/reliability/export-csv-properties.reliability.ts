/**
 * Issue 10: property tests of the CSV export. The writer (src/submissions/csv.ts), with many more
 * runs and wider text than its test in npm test: any cells, lone surrogates included, read back
 * through a standard CSV parser (csv-parse) exactly, a formula cell always behind a `'`. Then
 * end to end: generated submissions posted to a form, exported as CSV over HTTP, and the file read
 * back cell by cell.
 *
 * Reproduce a run with FC_SEED=<seed printed as a figure>; FC_RUNS changes the number of cases.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { csvRecords } from "../../src/submissions/csv.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { figure } from "./figures.ts";
import { sleep } from "./support/ports.ts";
import { byProfile } from "./support/profile.ts";

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 424_242;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : byProfile(50_000, 500_000);
/** Each end-to-end case creates a form and posts up to four submissions. */
const EXPORT_RUNS = process.env.FC_RUNS
  ? Math.max(20, Math.round(RUNS / 100))
  : byProfile(200, 2_000);

// What a spreadsheet would run as a formula (submissions.md section 6), with the full-width
// look-alikes some spreadsheets fold into them.
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const escaped = (cell: string) => (FORMULA_START.test(cell) ? `'${cell}` : cell);

const special = fc.constantFrom(
  ..."\",\r\n;'= +-@\t\uFF1D\uFF0B\uFF0D\uFF20\uFEFF\u2028\u0000é",
  "\r\n",
  '""',
  "\uD800",
  "\uDFFF",
  "😀",
);
/** Any string: every UTF-16 code unit (lone surrogates too), graphemes, and what CSV cares about. */
const anyCell = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.array(fc.oneof(special, fc.string({ maxLength: 2 })), { maxLength: 8 }).map((p) => p.join("")),
);

test("CSV writer: any cells round-trip through csv-parse, formula cells escaped", (t) => {
  const startedAt = Date.now();
  let cells = 0;
  let formulas = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }).chain((width) =>
        fc.array(fc.array(anyCell, { minLength: width, maxLength: width }), {
          minLength: 1,
          maxLength: 5,
        }),
      ),
      (records) => {
        const text = csvRecords(records);
        assert.ok(text.endsWith("\r\n"), "every record ends with CRLF");
        const read: string[][] = parse(text);
        // A lone surrogate cannot be written as UTF-8, which the parser reads (and the intake
        // never stores one): it reads back as U+FFFD.
        assert.deepEqual(
          read,
          records.map((record) => record.map((cell) => escaped(cell.toWellFormed()))),
        );
        for (const row of read) {
          for (const cell of row) {
            cells++;
            if (FORMULA_START.test(cell.replace(/^'/, ""))) formulas++;
            assert.ok(
              !FORMULA_START.test(cell),
              `a cell starts a formula: ${JSON.stringify(cell)}`,
            );
          }
        }
      },
    ),
    { numRuns: RUNS, seed: SEED },
  );
  figure(
    t,
    "CSV writer",
    `${RUNS} tables, ${cells} cells (${formulas} formula cells escaped) in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; seed ${SEED}`,
  );
});

let built: Awaited<ReturnType<typeof buildTestApp>>;
let key: string;

before(async () => {
  built = await buildTestApp({ rateLimitMax: 1_000_000_000, intakeRateLimitMax: 1_000_000_000 });
  key = (await createTenant()).fullKey;
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

/** Text the intake stores (no NUL, no lone surrogate, no leading U+FEFF). */
const storable = anyCell.map((s) =>
  s
    .toWellFormed()
    .replaceAll("\u0000", "")
    .replace(/^\uFEFF+/, ""),
);
const answerValue = fc.oneof(
  { weight: 4, arbitrary: storable },
  { weight: 1, arbitrary: fc.array(storable, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom("a", "=b"), storable, { maxKeys: 2 }) },
);
const answerName = fc.oneof(
  fc.constantFrom("name", "=cmd", "-1", "@x", "+", "a,b", 'q"'),
  storable,
);
const submission = fc.uniqueArray(fc.tuple(answerName, answerValue), {
  selector: ([name]) => name,
  minLength: 1,
  maxLength: 4,
});

const isText = (value: unknown) =>
  value === undefined ||
  value === null ||
  typeof value === "string" ||
  (Array.isArray(value) && value.every((item) => typeof item === "string"));

/** The export's cell for a value, as submissions.md section 6 and docs/decisions.md say. */
function cellOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((item) => typeof item === "string"))
    return value.join("; ");
  return JSON.stringify(value);
}

const objectText = (entries: [string, unknown][]) =>
  `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(",")}}`;

test("CSV export over HTTP: generated submissions read back cell by cell", async (t) => {
  const startedAt = Date.now();
  let submissions = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(submission, { minLength: 1, maxLength: 4 }), async (posted) => {
      const created = await built.app.inject({
        method: "POST",
        url: "/api/v1/forms",
        headers: { "api-key": key },
        payload: { name: "csv export properties", type: "endpoint" },
      });
      assert.equal(created.statusCode, 201, created.body);
      const formId = (created.json() as { id: string }).id;
      try {
        await exportsAsPosted(formId, posted);
      } finally {
        // An organization holds a bounded number of forms.
        await built.app.inject({
          method: "DELETE",
          url: `/api/v1/forms/${formId}`,
          headers: { "api-key": key },
        });
      }
      submissions += posted.length;
    }),
    { numRuns: EXPORT_RUNS, seed: SEED },
  );
  figure(
    t,
    "CSV export over HTTP",
    `${EXPORT_RUNS} forms, ${submissions} submissions exported and read back in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; seed ${SEED}`,
  );
});

/** Posts each submission in turn, exports the form as CSV and reads it back cell by cell. */
async function exportsAsPosted(formId: string, posted: [string, unknown][][]) {
  const ids: string[] = [];
  for (const entries of posted) {
    const res = await built.app.inject({
      method: "POST",
      url: `/f/${formId}`,
      headers: { "content-type": "application/json", accept: "application/json" },
      payload: objectText(entries),
    });
    assert.equal(res.statusCode, 201, res.body);
    ids.push((res.json() as { id: string }).id);
    // Distinct instants: "first appearance" of a column follows the order posted.
    await sleep(2);
  }
  const res = await built.app.inject({
    method: "GET",
    url: `/api/v1/forms/${formId}/submissions/export?format=csv`,
    headers: { "api-key": key },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.ok(res.body.startsWith("\uFEFF"), "a byte order mark");
  assert.ok(res.body.endsWith("\r\n"));
  const columns = [...new Set(posted.flatMap((entries) => entries.map(([name]) => name)))];
  const [header, ...rows] = parse(res.body, { bom: true }) as string[][];
  assert.deepEqual(header, ["id", "createdAt", "isSpam", ...columns, "files"].map(escaped));
  // Newest first.
  const expected = posted.map((entries) => new Map(entries)).reverse();
  const expectedIds = [...ids].reverse();
  assert.equal(rows.length, expected.length);
  for (const [i, row] of rows.entries()) {
    const values = expected[i] as Map<string, unknown>;
    assert.deepEqual(row.slice(0, 3), [expectedIds[i], row[1], "false"]);
    assert.match(row[1] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(row.at(-1), "", "no files");
    for (const [c, column] of columns.entries()) {
      const cell = row[3 + c] as string;
      const value = values.get(column);
      if (isText(value)) {
        assert.equal(cell, escaped(cellOf(value)), `column ${JSON.stringify(column)}`);
      } else {
        // Any other JSON value as its JSON text: the same value (a stored object's members
        // come back in the store's order, docs/decisions.md).
        assert.equal(cell, escaped(cell.replace(/^'/, "")));
        assert.deepEqual(JSON.parse(cell.replace(/^'/, "")), JSON.parse(JSON.stringify(value)));
      }
    }
    for (const cell of row) assert.ok(!FORMULA_START.test(cell), JSON.stringify(cell));
  }
}
