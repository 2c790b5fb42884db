/**
 * Issue 10: property tests of the intake's body parsers. Any generated list of names and values,
 * posted as urlencoded, multipart or JSON, is either stored exactly (in the order sent, a repeated
 * name as an array of strings, a JSON value as sent) or refused 422 with a `<member>: <reason>`
 * the rules below predict, with nothing stored and nothing counted. Never a 5xx. The expected
 * outcome is written out here from submissions.md and docs/decisions.md, not imported from src/.
 *
 * Reproduce a run with FC_SEED=<seed printed as a figure>; FC_RUNS changes the number of cases.
 */
import assert from "node:assert/strict";
import { after, before, type TestContext, test } from "node:test";
import fc from "fast-check";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { figure } from "./figures.ts";
import { byProfile } from "./support/profile.ts";

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 424_242;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : byProfile(2000, 10_000);
const MAX_NAME = 1000;
/** Names the intake keeps out of the answers (honeypot, captcha tokens): not generated here. */
const RESERVED = ["_gotcha", "cf-turnstile-response", "h-captcha-response", "g-recaptcha-response"];
const BOUNDARY = "----formdeckPropertyBoundary7Qx";

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

// ---------------------------------------------------------------------------------------------
// Text: the characters that matter to each format, to the store and to Unicode.

const interesting = fc.constantFrom(
  ..."&=+%; ,\"'<>\\/?#[]{}:\t\r\n é€漢字\u00A0\u200B\uFEFF",
  "😀",
  "%20",
  "%zz",
  "+",
  "__proto__",
  "constructor",
);
/** Text a form field may hold. */
const unit = fc.oneof(
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 3 }) },
  { weight: 1, arbitrary: interesting },
);
const text = (maxUnits: number) =>
  fc.array(unit, { maxLength: maxUnits }).map((parts) => parts.join(""));

/** A name: mostly from a few, so that names repeat; otherwise any text. */
const nameOf = (anyText: fc.Arbitrary<string>) =>
  fc
    .oneof(
      { weight: 1, arbitrary: fc.constantFrom("name", "email", "tags", "1", "0", "10", "é") },
      { weight: 1, arbitrary: anyText },
    )
    .filter((name) => !RESERVED.includes(name));

/** What may spoil one field of a case: text the store cannot hold, or a name too long. */
const spoiler = fc.record({
  field: fc.nat(),
  inName: fc.boolean(),
  at: fc.nat(),
  insert: fc.constantFrom("\u0000", "\uD800", "\uDBFF", "\uDC00", "\uDFFF", "\uFEFF", "LONG"),
});

/** Fields, one of them spoiled in about one case of three. */
const fieldList = (anyText: fc.Arbitrary<string>, values: fc.Arbitrary<string>) =>
  fc
    .tuple(
      fc.array(fc.tuple(nameOf(anyText), values), { maxLength: 12 }),
      fc.option(spoiler, { freq: 2 }),
    )
    .map(([fields, spoil]): [string, string][] => {
      if (!spoil || fields.length === 0) return fields;
      const copy = fields.map(([n, v]): [string, string] => [n, v]);
      const field = copy[spoil.field % copy.length] as [string, string];
      const i = spoil.inName ? 0 : 1;
      const target = field[i];
      const at = spoil.at % (target.length + 1);
      field[i] =
        spoil.insert === "LONG"
          ? "n".repeat(MAX_NAME + (spoil.at % 2))
          : spoil.insert === "\uFEFF"
            ? `\uFEFF${target}`
            : target.slice(0, at) + spoil.insert + target.slice(at);
      return copy;
    });

// ---------------------------------------------------------------------------------------------
// Encoders: bytes as a browser or a client library would send them, lone surrogates as the
// three bytes a careless encoder writes (which are not UTF-8).

function wtf8(value: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const code = value.codePointAt(i) as number;
    if (code > 0xffff) i++;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
    else if (code < 0x10000)
      bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
    else
      bytes.push(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 63),
        0x80 | ((code >> 6) & 63),
        0x80 | (code & 63),
      );
  }
  return Buffer.from(bytes);
}

const percent = (value: string) =>
  [...wtf8(value)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      if (/[A-Za-z0-9\-_.~]/.test(char)) return char;
      return byte === 0x20 ? "+" : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");

const urlencodedBody = (fields: [string, string][]) =>
  Buffer.from(fields.map(([n, v]) => `${percent(n)}=${percent(v)}`).join("&"));

function multipartBody(fields: [string, string][]) {
  const parts = fields.map(([name, value]) =>
    Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="`),
      wtf8(name),
      Buffer.from('"\r\n\r\n'),
      wtf8(value),
      Buffer.from("\r\n"),
    ]),
  );
  return Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

// ---------------------------------------------------------------------------------------------
// The expected outcome.

type Expected = { accepted: unknown[] } | { refused: string[] };

const hasNul = (s: string) => s.includes("\u0000");
const bad = (s: string) => hasNul(s) || !s.isWellFormed();

/** urlencoded and multipart: every value a string, a repeated name an array in order. */
function expectFields(fields: [string, string][], undecodable: string): Expected {
  if (fields.length === 0) return { refused: ["body: is empty"] };
  const reasons: string[] = [];
  if (fields.some(([n, v]) => !n.isWellFormed() || !v.isWellFormed())) reasons.push(undecodable);
  if (fields.some(([n]) => n.length > MAX_NAME)) {
    reasons.push(`body: has a field name longer than ${MAX_NAME} characters`);
  }
  const answers = new Map<string, string[]>();
  for (const [name, value] of fields) answers.set(name, [...(answers.get(name) ?? []), value]);
  for (const [name, values] of answers) {
    if (bad(name)) reasons.push("body: has a field name that is not valid text");
    for (const [i, value] of values.entries()) {
      const member = values.length > 1 ? `${name}[${i}]` : name;
      if (hasNul(value)) reasons.push(`${member}: must not contain NUL characters`);
      else if (!value.isWellFormed()) reasons.push(`${member}: must be valid Unicode text`);
      else if (value.startsWith("\uFEFF")) reasons.push(`${member}: must not start with U+FEFF`);
    }
  }
  if (reasons.length > 0) return { refused: reasons };
  return {
    accepted: [...answers].map(([name, values]) => ({
      id: name,
      label: name,
      value: values.length > 1 ? values : values[0],
    })),
  };
}

// ---------------------------------------------------------------------------------------------

interface Stats {
  accepted: number;
  refused: Map<string, number>;
}

/** Posts `body`; checks the answer, the stored row and that a refusal stored and counted nothing. */
async function check(
  formId: string,
  body: Buffer,
  contentType: string,
  expected: Expected,
  stats: Stats,
) {
  const before = await rowCount(formId);
  const res = await built.app.inject({
    method: "POST",
    url: `/f/${formId}`,
    headers: { "content-type": contentType, accept: "application/json" },
    payload: body,
  });
  const answer = res.json() as {
    ok?: true;
    id?: string;
    error?: { code: string; message: string };
  };
  assert.ok(res.statusCode < 500, `a ${res.statusCode}: ${res.body}`);
  if ("accepted" in expected) {
    assert.equal(res.statusCode, 201, res.body);
    const rows = await built.db.query<{ answers: unknown[]; isSpam: boolean }>(
      `SELECT answers, is_spam AS "isSpam" FROM submissions WHERE id = $1`,
      [answer.id],
    );
    assert.deepEqual(rows, [{ answers: expected.accepted, isSpam: false }]);
    assert.deepEqual(await rowCount(formId), {
      stored: before.stored + 1,
      counted: before.counted + 1,
    });
    stats.accepted++;
    return;
  }
  assert.equal(res.statusCode, 422, res.body);
  assert.equal(answer.error?.code, "unprocessable_entity", res.body);
  assert.ok(
    expected.refused.includes(answer.error?.message ?? ""),
    `${answer.error?.message} is not one of ${JSON.stringify(expected.refused)}`,
  );
  assert.deepEqual(
    await rowCount(formId),
    before,
    "a refused submission stores and counts nothing",
  );
  const message = answer.error?.message ?? "";
  const reason = message.slice(message.lastIndexOf(": ") + 2);
  stats.refused.set(reason, (stats.refused.get(reason) ?? 0) + 1);
}

async function rowCount(formId: string) {
  const [row] = await built.db.query<{ stored: number; counted: number }>(
    `SELECT (SELECT count(*) FROM submissions WHERE form_id = $1)::int AS stored,
            (SELECT submissions + COALESCE((SELECT sum(count) FROM submission_count_slots
               WHERE form_id = $1), 0) FROM forms WHERE id = $1)::int AS counted`,
    [formId],
  );
  return row as { stored: number; counted: number };
}

async function newForm() {
  const res = await built.app.inject({
    method: "POST",
    url: "/api/v1/forms",
    headers: { "api-key": key },
    payload: { name: "intake properties", type: "endpoint" },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (res.json() as { id: string }).id;
}

async function run(
  t: TestContext,
  what: string,
  property: (stats: Stats, formId: string) => fc.IAsyncProperty<never>,
) {
  const stats: Stats = { accepted: 0, refused: new Map() };
  const formId = await newForm();
  const startedAt = Date.now();
  await fc.assert(property(stats, formId) as fc.IAsyncProperty<unknown>, {
    numRuns: RUNS,
    seed: SEED,
  });
  const seconds = (Date.now() - startedAt) / 1000;
  figure(
    t,
    what,
    `${RUNS} cases in ${seconds.toFixed(1)} s: ${stats.accepted} stored exactly, refused ` +
      ([...stats.refused].map(([reason, n]) => `${n} × "${reason}"`).join(", ") || "none") +
      `; seed ${SEED}`,
  );
}

test("urlencoded: any names and values are stored exactly, in order, or refused by name", async (t) => {
  await run(
    t,
    "urlencoded",
    (stats, formId) =>
      fc.asyncProperty(fieldList(text(6), text(10)), async (fields) => {
        const expected = expectFields(fields, "body: is not valid percent-encoding of UTF-8 text");
        await check(
          formId,
          urlencodedBody(fields),
          "application/x-www-form-urlencoded",
          expected,
          stats,
        );
      }) as never,
  );
});

// Browsers write a field name into a quoted header parameter: `"`, CR and LF arrive escaped as
// %22, %0D, %0A, which the server does not decode (as busboy and every server reads them).
// U+FFFD is left out too: the parser writes it for a name's bytes that are not UTF-8, so a name
// that holds it is refused as not UTF-8 (docs/decisions.md, "Multipart part names").
const multipartName = text(6).map((name) => name.replace(/["\r\n\\\uFFFD]/g, "_"));

test("multipart fields: any names and values are stored exactly, in order, or refused by name", async (t) => {
  await run(
    t,
    "multipart",
    (stats, formId) =>
      fc.asyncProperty(fieldList(multipartName, text(10)), async (fields) => {
        const expected = expectFields(fields, "body: is not valid UTF-8");
        await check(
          formId,
          multipartBody(fields),
          `multipart/form-data; boundary=${BOUNDARY}`,
          expected,
          stats,
        );
      }) as never,
  );
});

/** Any JSON value, its strings and member names from the same text as the fields. */
const { json: jsonValue } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", maxDepth: 3 },
    text(6),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("json"), { maxLength: 4 }),
    fc
      .uniqueArray(fc.tuple(text(4), tie("json")), { selector: ([k]) => k, maxLength: 4 })
      .map((entries) => Object.fromEntries(entries)),
  ),
}));

/** The refusals a JSON answer can cause, by the path of the member that causes them. */
function jsonReasons(value: unknown, path: string, reasons: string[]) {
  if (typeof value === "string") {
    if (hasNul(value)) reasons.push(`${path}: must not contain NUL characters`);
    else if (!value.isWellFormed()) reasons.push(`${path}: must be valid Unicode text`);
    else if (value.startsWith("\uFEFF")) reasons.push(`${path}: must not start with U+FEFF`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) jsonReasons(item, `${path}[${i}]`, reasons);
  } else if (value !== null && typeof value === "object") {
    for (const [k, item] of Object.entries(value)) {
      if (bad(k)) reasons.push(`${path}: has a member name that is not valid text`);
      jsonReasons(item, `${path}.${k}`, reasons);
    }
  }
}

function expectJson(entries: [string, unknown][]): Expected {
  if (entries.length === 0) return { refused: ["body: is empty"] };
  const reasons: string[] = [];
  for (const [name, value] of entries) {
    if (name.length > MAX_NAME) {
      reasons.push(`body: has a field name longer than ${MAX_NAME} characters`);
    }
    if (bad(name)) reasons.push("body: has a field name that is not valid text");
    jsonReasons(value, name, reasons);
  }
  if (reasons.length > 0) return { refused: reasons };
  return { accepted: entries.map(([name, value]) => ({ id: name, label: name, value })) };
}

/** An object's text with its members in the order given (JSON.stringify would sort integer names first). */
const objectText = (entries: [string, unknown][]) =>
  `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(",")}}`;

test("JSON: any object is stored exactly, its members in the order sent, or refused by name", async (t) => {
  const entries = fc
    .tuple(
      fc.uniqueArray(fc.tuple(nameOf(text(6)), jsonValue), {
        selector: ([name]) => name,
        maxLength: 12,
      }),
      fc.option(spoiler, { freq: 2 }),
    )
    .map(([fields, spoil]): [string, unknown][] => {
      if (!spoil || fields.length === 0) return fields;
      const copy = fields.map(([n, v]): [string, unknown] => [n, v]);
      const field = copy[spoil.field % copy.length] as [string, unknown];
      const insert = spoil.insert === "LONG" ? "n".repeat(MAX_NAME + 1) : spoil.insert;
      if (spoil.inName || typeof field[1] !== "string") {
        const name = spoil.insert === "LONG" ? insert : `${field[0]}${insert}`;
        if (copy.some(([n]) => n === name)) return fields;
        field[0] = name;
      } else {
        field[1] = spoil.insert === "\uFEFF" ? `\uFEFF${field[1]}` : `${field[1]}${insert}`;
      }
      return copy;
    });
  await run(
    t,
    "JSON",
    (stats, formId) =>
      fc.asyncProperty(entries, async (fields) => {
        const body = Buffer.from(objectText(fields));
        await check(formId, body, "application/json", expectJson(fields), stats);
      }) as never,
  );
});
