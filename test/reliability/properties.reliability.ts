/**
 * Issue 4, part 2: property-based input testing. Bodies for create and update are generated
 * across every member the spec lets a client write, valid and invalid. A valid body must be stored
 * and read back exactly (the record computed here from the defaults and the body); an invalid one
 * (one member wrong, the rest valid) must answer 422 with the exact `<member>: <reason>` message
 * and write nothing. The rules below are written out from the spec, the shared decisions and
 * docs/decisions.md, not imported from src/, so that a rule the code gets wrong fails here.
 *
 * Reproduce a run with FC_SEED=<seed printed as a figure>; FC_RUNS changes the number of cases.
 */
import assert from "node:assert/strict";
import { after, before, describe, type TestContext, test } from "node:test";
import fc from "fast-check";
import {
  type Answer,
  type Body,
  type Client,
  client,
  DEFAULTS,
  errorOf,
  TIMESTAMP,
  unprocessable,
} from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { figure } from "./figures.ts";

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 424_242;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 10_000;
const PLAN_RUNS = Math.max(50, Math.round(RUNS / 25));

const MAX_RESPONSES = 2_147_483_647;
const DURATIONS = ["30", "60", "90", "365", "forever", "never"] as const;
const PAID_SETTINGS = ["sendRespondentEmailNotifications", "useCustomRedirect", "autoCloseEnabled"];
const AUTO_CLOSE = ["autoCloseEnabled", "autoCloseDate", "autoCloseTime", "autoCloseTimezone"];
/**
 * Members that create and update also take since submissions.md section 1 (appearance and
 * protection): not generated here, and not unknown either. Their formats are tested in
 * test/forms/forms-settings.test.ts.
 */
const SECTION_ONE = [
  "fields",
  "submitButtonText",
  "pageMode",
  "headerTitle",
  "headerDescription",
  "headerImage",
  "logo",
  "accentColor",
  "backgroundColor",
  "textColor",
  "buttonBackgroundColor",
  "buttonTextColor",
  "buttonBorderStyle",
  "inputBorderStyle",
  "showCustomClosedMessage",
  "closeMessageTitle",
  "closeMessageDescription",
  "ipBlacklist",
  "imageCompressionType",
  "disableEmailDataCensoring",
  // hosted-forms.md section 1: the hosted page's bot check (tested in test/fields/).
  "captchaProvider",
  "captchaSiteKey",
];
const READ_ONLY = [
  "id",
  "organizationId",
  "createdAt",
  "updatedAt",
  "submissions",
  "webhookEnabled",
  "webhookUrl",
];
const FORM_ID = /^form_[A-Za-z0-9_-]{22}$/;

// ---------------------------------------------------------------------------------------------
// The members a client may write, and the rules of each.

type Kind =
  | { kind: "name" }
  | { kind: "text"; max: number }
  /** Text that ends up in an email header: one line, no control characters. */
  | { kind: "line"; max: number }
  | { kind: "secret" }
  | { kind: "boolean" }
  | { kind: "enum"; values: readonly string[] }
  | { kind: "date" }
  | { kind: "time" }
  | { kind: "timezone" }
  | { kind: "color" }
  | { kind: "url"; https: boolean }
  | { kind: "emails" }
  | { kind: "maxResponses"; nullable: boolean }
  /**
   * A comma-separated list (submissions.md section 1): valid values from a fixed set; its format's
   * refusals are generated in test/forms/forms-settings.test.ts, here only a wrong type.
   */
  | { kind: "list"; examples: readonly string[] };

const text = (max: number): Kind => ({ kind: "text", max });
const line = (max: number): Kind => ({ kind: "line", max });
const bool: Kind = { kind: "boolean" };
const color: Kind = { kind: "color" };
const httpUrl: Kind = { kind: "url", https: false };

/** Members both create and update accept (the spec's create table minus name, type, saveAnswers). */
const SHARED: Record<string, Kind> = {
  removeServiceBranding: bool,
  sendEmailNotifications: bool,
  emailsToNotify: { kind: "emails" },
  submissionStorageDuration: { kind: "enum", values: DURATIONS },
  sendRespondentEmailNotifications: bool,
  respondentEmailFromName: line(200),
  respondentEmailSubject: line(500),
  respondentEmailMessageHTML: text(100_000),
  limitResponses: bool,
  isClosed: bool,
  autoCloseEnabled: bool,
  autoCloseDate: { kind: "date" },
  autoCloseTimezone: { kind: "timezone" },
  autoCloseTime: { kind: "time" },
  useCustomThankYouPage: bool,
  tpButtonText: text(200),
  tpButtonColor: color,
  tpButtonBackgroundColor: color,
  tpBackgroundColor: color,
  tpTextColor: color,
  tpHeader: text(500),
  tpMessage: text(5_000),
  tpButtonUrl: httpUrl,
  useCustomRedirect: bool,
  customSuccessUrl: httpUrl,
  customHoneypot: text(200),
  providerCaptchaEnabled: bool,
  providerCaptchaSecretKey: { kind: "secret" },
  allowedDomains: {
    kind: "list",
    examples: ["", "example.com", "Example.com, *.example.org", " a.example , b.example.net "],
  },
};

const CREATE: Record<string, Kind> = {
  name: { kind: "name" },
  type: { kind: "enum", values: ["endpoint", "hosted"] },
  ...SHARED,
  saveAnswers: bool,
  maxResponses: { kind: "maxResponses", nullable: true },
};

const UPDATE: Record<string, Kind> = {
  name: { kind: "name" },
  ...SHARED,
  maxResponses: { kind: "maxResponses", nullable: false },
  seoTitle: text(200),
  seoDescription: text(1_000),
  seoImage: { kind: "url", https: true },
  allowedCountries: { kind: "list", examples: ["", "DE", "DE,fr", " us , GB "] },
};

/** Most-significant format lengths, from docs/decisions.md and the formats themselves. */
const FORMAT_MAX = { date: 10, time: 5, timezone: 100, color: 7, url: 2_048 } as const;

// ---------------------------------------------------------------------------------------------
// Oracles, written independently of src/formats.ts.

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) =>
  [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;

/** Prints how many cases an operation ran, and fails unless there were enough of each kind. */
function reportCases(
  t: TestContext,
  operation: string,
  counts: { valid: number; invalid: number },
  started: number,
) {
  const cases = counts.valid + counts.invalid;
  const seconds = (performance.now() - started) / 1000;
  figure(
    t,
    `${operation} cases (valid + invalid)`,
    `${cases} (${counts.valid} + ${counts.invalid})`,
  );
  figure(t, `${operation} cases/s`, Math.round(cases / seconds));
  assert.ok(cases >= RUNS);
  if (RUNS >= 100) assert.ok(counts.valid > RUNS / 4 && counts.invalid > RUNS / 4, "both kinds");
}

function isValidDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);
}
const isValidTime = (value: string) => /^([01][0-9]|2[0-3]):[0-5][0-9]$/.test(value);
const isValidColor = (value: string) => /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(value);
function runtimeKnowsZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");
const HOUR = 3_600_000;

/** The offset of `timeZone` at `instant` in ms, from the runtime's own `GMT±hh:mm[:ss]` text. */
function offsetAt(instant: number, timeZone: string): number {
  const name = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" })
    .formatToParts(instant)
    .find((part) => part.type === "timeZoneName")?.value;
  const match = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name ?? "");
  assert.ok(match, `unexpected offset text ${name} for ${timeZone}`);
  if (!match[1]) return 0;
  const ms = (Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0)) * 1000;
  return match[1] === "-" ? -ms : ms;
}

/**
 * The instant a wall time names in a zone, when it names exactly one or two (the first); undefined
 * for a wall time in a DST gap, which this oracle leaves open. Used only to tell whether two
 * deadlines are the same instant.
 */
function instantOf(date: string, time: string, timeZone: string): number | undefined {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const [hh, mm] = time.split(":").map(Number) as [number, number];
  const wallDate = new Date(0);
  wallDate.setUTCFullYear(y, m - 1, d);
  const wall = wallDate.setUTCHours(hh, mm, 0, 0);
  const candidates = [offsetAt(wall - 24 * HOUR, timeZone), offsetAt(wall + 24 * HOUR, timeZone)]
    .map((offset) => wall - offset)
    .filter((instant) => instant + offsetAt(instant, timeZone) === wall);
  return candidates.length > 0 ? Math.min(...candidates) : undefined;
}

/**
 * A record's auto-close deadline: null when off or not fully set. Generated dates are either in
 * years up to 2020 (long past) or from 2030 (far ahead), so "past" never depends on the clock.
 */
function deadlineOf(record: Body): { past: boolean; instant: number | undefined } | null {
  const { autoCloseEnabled, autoCloseDate, autoCloseTime, autoCloseTimezone } = record;
  if (!autoCloseEnabled || !autoCloseDate || !autoCloseTime || !autoCloseTimezone) return null;
  return {
    past: Number(autoCloseDate.slice(0, 4)) <= 2020,
    instant: instantOf(autoCloseDate, autoCloseTime, autoCloseTimezone),
  };
}

/** Addresses compared without regard to case, the first spelling kept (docs/decisions.md). */
function withoutDuplicates(emails: string[]): string[] {
  const seen = new Set<string>();
  return emails.filter((email) => {
    const key = email.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The members of `body` as the record shows them: no secret, addresses deduplicated. */
function written(body: Body): Body {
  const { providerCaptchaSecretKey: _secret, ...rest } = body;
  if (Array.isArray(rest.emailsToNotify))
    rest.emailsToNotify = withoutDuplicates(rest.emailsToNotify);
  return rest;
}

/** The record a valid create of `body` must answer with; `undefined` isClosed means "either". */
function expectedCreated(answer: Body, body: Body, organizationId: string): Body {
  const record = { ...DEFAULTS, ...written(body) };
  const deadline = deadlineOf(record);
  return {
    ...record,
    isClosed: "isClosed" in body ? body.isClosed : deadline?.past === true,
    id: answer.id,
    organizationId,
    createdAt: answer.createdAt,
    updatedAt: answer.updatedAt,
  };
}

/**
 * Whether a valid update of `previous` by `body` leaves the form closed, as the decisions have
 * it: an explicit isClosed has the last word; otherwise a deadline written and changed to one
 * already past closes the form; re-sending the same deadline does not. Undefined: not decidable
 * here (a wall time in a DST gap).
 */
function closedAfterUpdate(previous: Body, next: Body, body: Body): boolean | undefined {
  if ("isClosed" in body) return body.isClosed;
  const touched = AUTO_CLOSE.some((member) => member in body);
  const deadline = deadlineOf(next);
  if (!touched || deadline === null || !deadline.past || previous.isClosed)
    return previous.isClosed;
  const earlier = deadlineOf(previous);
  if (earlier === null || !earlier.past) return true;
  if (earlier.instant === undefined || deadline.instant === undefined) return undefined;
  return earlier.instant !== deadline.instant;
}

// ---------------------------------------------------------------------------------------------
// Generators of valid values.

const BOM = "\uFEFF";
const PRINTABLE = fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 });
/** One code point: mostly printable ASCII, any other code point but NUL, and known troublemakers. */
const codePoint = fc.oneof(
  { weight: 6, arbitrary: PRINTABLE },
  {
    weight: 3,
    arbitrary: fc
      .string({ unit: "binary", minLength: 1, maxLength: 1 })
      .filter((c) => c !== "\u0000"),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "%",
      "_",
      "\\",
      "'",
      '"',
      "<",
      "&",
      "😀",
      "\u{10FFFF}",
      "\u2028",
      "\n",
      "\u0301",
      "\uFEFF",
      "\u00A0",
      "\u0001",
      "\u007F",
    ),
  },
);
/** A string as valid text members take it: U+FEFF may appear anywhere but first. */
const str = (maxLength: number, minLength = 0) =>
  fc.string({ unit: codePoint, minLength, maxLength }).filter((s) => !s.startsWith(BOM));
/** A string of exactly `length` code points (the unit Ajv counts lengths in). */
const exactly = (length: number) =>
  str(4, 1).map((chunk) => {
    const points = [...chunk];
    return Array.from({ length }, (_, i) => points[i % points.length]).join("");
  });
/** Short strings mostly, and now and then one at the limit. */
const textUpTo = (max: number) =>
  fc.oneof(
    { weight: max > 1_000 ? 60 : 15, arbitrary: str(Math.min(max, 30)) },
    { weight: 1, arbitrary: exactly(max) },
  );

/** Line breaks and control characters (C0, DEL, C1, U+2028, U+2029), refused in header texts. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const BREAK_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
const isOneLine = (text: string) => !BREAK_OR_CONTROL.test(text);

const validName = fc
  .oneof({ weight: 20, arbitrary: str(40, 1) }, { weight: 1, arbitrary: exactly(200) })
  .filter((name) => /\S/u.test(name) && isOneLine(name));

/** Secrets carry a unique marker, so that a leak of one can be searched for. */
const validSecret = fc.oneof(
  fc.tuple(fc.uuid(), str(20)).map(([id, rest]) => `sk_${id}_${rest}`),
  fc.tuple(fc.uuid(), exactly(1_000 - 40)).map(([id, rest]) => `sk_${id}_${rest}`),
);
const secretMarker = (secret: string) => secret.slice(0, 39);

const dateIn = (minYear: number, maxYear: number) =>
  fc
    .tuple(fc.integer({ min: minYear, max: maxYear }), fc.integer({ min: 1, max: 12 }), fc.nat(30))
    .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(Math.min(d + 1, daysIn(y, m)), 2)}`);
const validDate = fc.oneof(dateIn(0, 2020), dateIn(2030, 9999), fc.constant(""));
const validTime = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(fc.nat(23), fc.nat(59)).map(([h, m]) => `${pad(h, 2)}:${pad(m, 2)}`),
  },
  { weight: 1, arbitrary: fc.constant("") },
);
const ZONES = [
  ...Intl.supportedValuesOf("timeZone"),
  "UTC",
  "Etc/UTC",
  "GMT",
  "Asia/Kolkata",
  "Asia/Calcutta",
  "US/Eastern",
  "europe/berlin",
];
const validZone = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ZONES) },
  { weight: 1, arbitrary: fc.constant("") },
);
const HEX = [..."0123456789abcdefABCDEF"];
const validColor = fc
  .oneof(
    fc.string({ unit: fc.constantFrom(...HEX), minLength: 3, maxLength: 3 }),
    fc.string({ unit: fc.constantFrom(...HEX), minLength: 6, maxLength: 6 }),
  )
  .map((hex) => `#${hex}`);
const validUrl = (https: boolean) => {
  const schemes = https ? ["https"] : ["http", "https"];
  const scheme = https ? "https" : "http";
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .webUrl({ validSchemes: schemes, withQueryParameters: true, withFragments: true })
        .filter((url) => url.length <= FORMAT_MAX.url),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "",
        `${scheme}://2130706433/`,
        `${scheme}://0x7f.1/`,
        `${scheme}://127.1/x`,
        `${scheme.toUpperCase()}://EXAMPLE.COM/Path?Q=1`,
        `${scheme}://[::1]:8080/x`,
        `${scheme}://xn--bcher-kva.example/`,
        `${scheme}://user:pass@example.com/`,
        `${scheme}://a/`,
        `${scheme}://e.co/${"a".repeat(FORMAT_MAX.url - scheme.length - 9)}`,
      ),
    },
  );
};
const DUPLICATES = ["Dup@Example.com", "dup@example.com", "DUP@EXAMPLE.COM", "a@b.co", "A@B.CO"];
const emailOrDuplicate = fc.oneof(
  { weight: 4, arbitrary: fc.emailAddress() },
  { weight: 1, arbitrary: fc.constantFrom(...DUPLICATES) },
);
const validEmails = fc.oneof(
  { weight: 10, arbitrary: fc.array(emailOrDuplicate, { maxLength: 6 }) },
  { weight: 1, arbitrary: fc.array(emailOrDuplicate, { minLength: 50, maxLength: 50 }) },
);
const validMaxResponses = (nullable: boolean) =>
  fc.oneof(
    fc.integer({ min: 1, max: MAX_RESPONSES }),
    fc.constantFrom(1, MAX_RESPONSES, ...(nullable ? [null] : [])),
  );

function validOf(kind: Kind): fc.Arbitrary<unknown> {
  switch (kind.kind) {
    case "name":
      return validName;
    case "text":
      return textUpTo(kind.max);
    case "line":
      return textUpTo(kind.max).filter(isOneLine);
    case "secret":
      return validSecret;
    case "boolean":
      return fc.boolean();
    case "enum":
      return fc.constantFrom(...kind.values);
    case "date":
      return validDate;
    case "time":
      return validTime;
    case "timezone":
      return validZone;
    case "color":
      return validColor;
    case "url":
      return validUrl(kind.https);
    case "emails":
      return validEmails;
    case "maxResponses":
      return validMaxResponses(kind.nullable);
    case "list":
      return fc.constantFrom(...kind.examples);
  }
}

const validBody = (members: Record<string, Kind>, required: string[]) =>
  fc.record(Object.fromEntries(Object.entries(members).map(([k, kind]) => [k, validOf(kind)])), {
    requiredKeys: required,
  }) as fc.Arbitrary<Body>;

// ---------------------------------------------------------------------------------------------
// Generators of invalid values: each with the reason the message must give.

interface Wrong {
  value: unknown;
  reason: string;
  /** Appended to the member's name in the message, as `[2]` for an array item. */
  at?: string;
}
const REMOVE = Symbol("remove the member");

const wrong = (arbitrary: fc.Arbitrary<unknown>, reason: string): fc.Arbitrary<Wrong> =>
  arbitrary.map((value) => ({ value, reason }));

const typeOf = (value: unknown) =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number" && Number.isInteger(value)
        ? "integer"
        : typeof value;
const anyJson = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ unit: "grapheme-ascii", maxLength: 6 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ unit: "grapheme-ascii", maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);
/** A JSON value of none of `types` (as `typeOf` names them; "number" covers integers too). */
const notOfType = (...types: string[]) =>
  anyJson.filter((value) => {
    const type = typeOf(value);
    return !types.includes(type) && !(types.includes("number") && type === "integer");
  });

const asciiUpTo = (maxLength: number, minLength = 0) =>
  fc.string({ unit: "grapheme-ascii", minLength, maxLength });
const LONE_SURROGATES = ["\uD800", "\uDBFF", "\uDC00", "\uDFFF"];

/** Values every string member refuses whatever its format: type, length, NUL, lone surrogates. */
/** A line break or control character between two pieces of text that are not blank. */
const notOneLine = wrong(
  fc
    .tuple(
      fc.constantFrom("\r\n", "\n", "\r", "\t", "\u0001", "\u001f", "\u007f", "\u0085", "\u2028"),
      PRINTABLE.filter((c) => c !== " "),
    )
    .map(([c, around]) => `${around}${c}${around}`),
  "must not contain line breaks or control characters",
);

function wrongString(max: number): fc.Arbitrary<Wrong>[] {
  const room = Math.min(max - 1, 10);
  return [
    wrong(notOfType("string"), "must be a string"),
    wrong(
      fc.integer({ min: 1, max: 3 }).chain((extra) => exactly(max + extra)),
      `must be at most ${max} characters`,
    ),
    wrong(
      fc.tuple(str(room), str(room)).map(([a, b]) => `${a}\u0000${b}`),
      "must not contain NUL characters",
    ),
    wrong(
      fc.tuple(str(room), fc.constantFrom(...LONE_SURROGATES), str(room)).map((p) => p.join("")),
      "must be valid Unicode text",
    ),
    wrong(
      str(room).map((rest) => `${BOM}${rest}`),
      "must not start with U+FEFF",
    ),
  ];
}

const INVALID_DATES = [
  "2026-02-30",
  "2026-13-01",
  "2026-00-10",
  "2026-01-32",
  "2026-3-1",
  "2023-02-29",
  "1900-02-29",
  "0000-00-00",
  "26-01-01",
  "2026/01/01",
  "2026-01-1 ",
  "２０２６-01-01",
  "-001-01-01",
];
const INVALID_TIMES = [
  "24:00",
  "9:00",
  "12:60",
  "12:5",
  "1200",
  "-1:00",
  "23:5a",
  "ab:cd",
  " 1:00",
];
const INVALID_ZONES = [
  "Mars/Base",
  "Europe/Atlantis",
  "+05:30",
  "-08:00",
  "+0530",
  "Z",
  "Etc/GMT+15",
  "GMT+25",
  " UTC",
  "UTC ",
  "Europe/Berlin/",
  "../etc/passwd",
];
const INVALID_COLORS = ["red", "#abcd", "", "#ggg", "#12345", "123456", "# 12", "#ABCDEG", "#-12"];
const INVALID_URLS = [
  "javascript:alert(1)",
  "JavaScript:alert(document.cookie)",
  "javascript://example.com/%0Aalert(1)",
  "data:text/html,<script>alert(1)</script>",
  "data://text/plain,x",
  "vbscript:msgbox(1)",
  "ftp://example.com/",
  "file:///etc/passwd",
  "mailto:a@b.co",
  "ws://example.com/",
  "//example.com/",
  "/relative/path",
  "example.com",
  "http://",
  "https://",
  "http:/example.com",
  "http:example.com",
  "https:\\\\example.com",
  " http://example.com",
  "http://example.com ",
  "http://exa mple.com",
  "http://example.com/\n",
  "http://\texample.com",
  "http://[::1/",
  "http://:80/",
];
const INVALID_EMAILS = [
  "",
  "a",
  "a@b",
  "a b@c.de",
  "@b.co",
  "a@@b.co",
  "a@b..co",
  "a@-b.co",
  "a@b.co ",
  "a(b)@c.de",
  '"a"@b.co',
  `${"x".repeat(250)}@b.co`,
];

function wrongFormat(kind: Kind & { kind: "date" | "time" | "timezone" | "color" | "url" }) {
  const max = FORMAT_MAX[kind.kind];
  const reasons = {
    date: "must be a date in the form YYYY-MM-DD",
    time: "must be a time in the form HH:mm",
    timezone: "must be an IANA time zone",
    color: "must be a color in the form #rgb or #rrggbb",
    url:
      kind.kind === "url" && kind.https
        ? "must be an absolute https URL"
        : "must be an absolute http or https URL",
  };
  const reason = reasons[kind.kind];
  const listed = {
    date: INVALID_DATES,
    time: INVALID_TIMES,
    timezone: INVALID_ZONES,
    color: INVALID_COLORS,
    url:
      kind.kind === "url" && kind.https
        ? [...INVALID_URLS, "http://example.com/a.png"]
        : INVALID_URLS,
  }[kind.kind];
  const refusedByOracle = {
    date: (v: string) => v !== "" && !isValidDate(v),
    time: (v: string) => v !== "" && !isValidTime(v),
    timezone: (v: string) => v !== "" && (!/^[A-Za-z]/.test(v) || !runtimeKnowsZone(v)),
    color: (v: string) => !isValidColor(v),
    url: (v: string) => v !== "" && !/^https?:\/\//i.test(v),
  }[kind.kind];
  return [
    wrong(fc.constantFrom(...listed), reason),
    wrong(asciiUpTo(Math.min(max, 30)).filter(refusedByOracle), reason),
    ...wrongString(max),
  ];
}

function wrongOf(kind: Kind, operation: "create" | "update"): fc.Arbitrary<Wrong>[] {
  switch (kind.kind) {
    case "name":
      return [
        wrong(fc.constant(""), "must not be empty"),
        wrong(
          fc
            .string({
              unit: fc.constantFrom(
                " ",
                "\t",
                "\n",
                "\r",
                "\u00A0",
                "\u2003",
                "\u2028",
                "\u3000",
                "\uFEFF",
              ),
              minLength: 1,
              maxLength: 10,
            })
            .filter((blank) => !blank.startsWith(BOM)),
          "must not be blank",
        ),
        ...wrongString(200),
        notOneLine,
      ];
    case "text":
      return wrongString(kind.max);
    case "line":
      return [...wrongString(kind.max), notOneLine];
    case "secret":
      return wrongString(1_000);
    case "boolean":
      return [
        wrong(
          fc.oneof(fc.constantFrom("true", "false", 0, 1), notOfType("boolean")),
          "must be a boolean",
        ),
      ];
    case "enum":
      return [
        wrong(
          fc
            .oneof(
              fc.constantFrom(
                "7",
                "FOREVER",
                "Forever",
                " 30",
                "30 ",
                "",
                "0",
                "Hosted",
                "endpoint ",
              ),
              asciiUpTo(8),
            )
            .filter((v) => !kind.values.includes(v)),
          `must be one of ${kind.values.join(", ")}`,
        ),
        wrong(fc.oneof(fc.constantFrom(30, 365), notOfType("string")), "must be a string"),
      ];
    case "date":
    case "time":
    case "timezone":
    case "color":
    case "url":
      return wrongFormat(kind);
    case "emails": {
      const withItem = (item: fc.Arbitrary<unknown>, reason: string) =>
        fc
          .tuple(fc.array(fc.emailAddress(), { maxLength: 5 }), item, fc.nat())
          .map(([list, bad, position]): Wrong => {
            const index = position % (list.length + 1);
            const value: unknown[] = [...list];
            value.splice(index, 0, bad);
            return { value, reason, at: `[${index}]` };
          });
      return [
        wrong(notOfType("array"), "must be an array"),
        withItem(
          fc.oneof(
            fc.constantFrom(...INVALID_EMAILS),
            asciiUpTo(20).filter((v) => !v.includes("@")),
          ),
          "must be an email address",
        ),
        withItem(notOfType("string"), "must be a string"),
        withItem(
          fc.tuple(asciiUpTo(5), asciiUpTo(5)).map(([a, b]) => `${a}\u0000${b}@b.co`),
          "must not contain NUL characters",
        ),
        wrong(
          fc.array(fc.emailAddress(), { minLength: 51, maxLength: 60 }),
          "must have at most 50 items",
        ),
      ];
    }
    case "maxResponses": {
      const typeReason = kind.nullable ? "must be an integer or null" : "must be an integer";
      return [
        wrong(fc.integer({ min: -(2 ** 53) + 1, max: 0 }), "must be at least 1"),
        wrong(fc.constantFrom(0, -1), "must be at least 1"),
        wrong(
          fc.integer({ min: MAX_RESPONSES + 1, max: 2 ** 53 - 1 }),
          `must be at most ${MAX_RESPONSES}`,
        ),
        wrong(fc.constantFrom(MAX_RESPONSES + 1, 1e300), `must be at most ${MAX_RESPONSES}`),
        wrong(
          fc.oneof(
            fc.constantFrom(1.5, 0.1, -2.5, "5", "1", true),
            notOfType("integer", "null"),
            ...(operation === "update" ? [fc.constant(null)] : []),
          ),
          typeReason,
        ),
      ];
    }
    case "list":
      return [wrong(notOfType("string"), "must be a string")];
  }
}

/** Names the operation does not take, with the reason the decisions give for each. */
function refusedMembers(accepted: Record<string, Kind>): fc.Arbitrary<[string, Wrong]> {
  const unknownName = fc
    .oneof(
      asciiUpTo(12),
      str(8),
      fc.constantFrom(
        ...Object.keys(DEFAULTS),
        ...Object.keys(UPDATE),
        ...Object.keys(CREATE),
        "__proto__",
        "constructor",
        "prototype",
        "Name",
        "NAME",
        "name ",
        "isclosed",
        "a~1b",
        "a~0b",
        "a/b",
        "a.b",
        "0",
        "[0]",
        "",
      ),
    )
    .filter(
      (name) => !(name in accepted) && !READ_ONLY.includes(name) && !SECTION_ONE.includes(name),
    );
  return fc.oneof(
    fc
      .tuple(unknownName, anyJson)
      .map(([name, value]): [string, Wrong] => [name, { value, reason: "is not allowed" }]),
    fc
      .tuple(fc.constantFrom(...READ_ONLY), anyJson)
      .map(([name, value]): [string, Wrong] => [name, { value, reason: "is read-only" }]),
  );
}

type Case = { valid: true; body: Body } | { valid: false; body: Body; message: string };

/** Valid bodies, and valid bodies with exactly one member made wrong (or the name left out). */
function cases(operation: "create" | "update"): fc.Arbitrary<Case> {
  const members = operation === "create" ? CREATE : UPDATE;
  const required = operation === "create" ? ["name"] : [];
  const body = validBody(members, required);
  // Every member about equally often; members the operation refuses as often as ten members.
  const memberWrong = fc.oneof(
    ...Object.entries(members).map(([member, kind]) =>
      fc.oneof(...wrongOf(kind, operation)).map((w): [string, Wrong] => [member, w]),
    ),
  );
  const oneWrong: fc.Arbitrary<[string, Wrong | typeof REMOVE]> = fc.oneof(
    { weight: 30, arbitrary: memberWrong },
    { weight: 10, arbitrary: refusedMembers(members) },
    ...(operation === "create"
      ? [{ weight: 1, arbitrary: fc.constant<[string, typeof REMOVE]>(["name", REMOVE]) }]
      : []),
  );
  const invalid = fc.tuple(body, oneWrong).map(([valid, [member, w]]): Case => {
    const entries: [string, unknown][] = Object.entries(valid).filter(([k]) => k !== member);
    if (w === REMOVE) {
      return { valid: false, body: Object.fromEntries(entries), message: `${member}: is required` };
    }
    entries.push([member, w.value]);
    // Object.fromEntries defines `__proto__` as an own member, as JSON.parse does on the server.
    return {
      valid: false,
      body: Object.fromEntries(entries),
      message: `${member}${w.at ?? ""}: ${w.reason}`,
    };
  });
  return fc.oneof(
    body.map((b): Case => ({ valid: true, body: b })),
    invalid,
  );
}

// ---------------------------------------------------------------------------------------------

let testApp: Awaited<ReturnType<typeof buildTestApp>>;

before(async () => {
  // The quota is not under test here: tens of thousands of requests go through one key.
  testApp = await buildTestApp({ rateLimitMax: 1_000_000_000 });
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

/** Asserts that no response carries the secret's marker, nor a record the secret's member. */
function assertSecretHidden(answer: Answer, body: Body) {
  if (answer.status < 300) {
    assert.ok(!answer.text.includes("providerCaptchaSecretKey"), "secret member in a record");
  }
  // Only generated valid secrets carry a marker unlikely to appear in an answer by chance.
  const secret = body.providerCaptchaSecretKey;
  if (typeof secret === "string" && /^sk_[0-9a-f-]{36}_/.test(secret)) {
    assert.ok(!answer.text.includes(secretMarker(secret)), "secret leaked");
  }
}

/** The forms the store holds for an organization, read directly: cheaper than a list request. */
async function storedForms(organizationId: string): Promise<number> {
  const rows = await testApp.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM forms WHERE organization_id = $1",
    [organizationId],
  );
  return rows[0]?.n ?? -1;
}

const params = () => ({ seed: SEED, numRuns: RUNS, endOnFailure: false });

describe("generated create and update bodies, on a paid organization", () => {
  let api: Client;
  let organizationId: string;

  before(async () => {
    const tenant = await createTenant("paid");
    api = client(testApp.app, tenant.fullKey);
    organizationId = tenant.org.id;
  });

  test("create: every valid body is stored exactly, every invalid one is refused by name", async (t) => {
    figure(t, "properties seed", SEED);
    let forms = await storedForms(organizationId);
    const counts = { valid: 0, invalid: 0 };
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(cases("create"), async (c) => {
        const sentAt = Date.now();
        const res = await api.create(c.body);
        if (res.status === 201) forms += 1;
        assertSecretHidden(res, c.body);
        if (c.valid) {
          counts.valid += 1;
          assert.equal(res.status, 201, res.text);
          const expected = expectedCreated(res.body, c.body, organizationId);
          assert.deepEqual(res.body, expected);
          assert.match(res.body.id, FORM_ID);
          assert.match(res.body.createdAt, TIMESTAMP);
          assert.equal(res.body.updatedAt, res.body.createdAt);
          const createdAt = Date.parse(res.body.createdAt);
          assert.ok(
            createdAt >= sentAt - 1_000 && createdAt <= Date.now() + 1_000,
            "createdAt is now",
          );
          assert.equal(res.headers.location, `/api/v1/forms/${res.body.id}`);
          const read = await api.get(res.body.id);
          assertSecretHidden(read, c.body);
          assert.deepEqual(read.body, expected);
        } else {
          counts.invalid += 1;
          assert.deepEqual(
            { status: res.status, body: res.body },
            {
              status: 422,
              body: unprocessable(c.message),
            },
          );
          const now = await storedForms(organizationId);
          const expected = forms;
          forms = now;
          assert.equal(now, expected, "a refused create stored a form");
        }
      }),
      params(),
    );
    reportCases(t, "create", counts, started);
  });

  test("update: every valid body is applied exactly, every invalid one changes nothing", async (t) => {
    const pool: string[] = [];
    for (let i = 0; i < 8; i++) pool.push((await api.createOk({ name: `update pool ${i}` })).id);
    /** The last record read back of each form; absent after a failure, so it is read again. */
    const known = new Map<string, Body>();
    const counts = { valid: 0, invalid: 0, closedUndecided: 0 };
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(fc.nat(pool.length - 1), cases("update"), async (index, c) => {
        const id = pool[index] as string;
        const previous = known.get(id) ?? (await api.getOk(id));
        known.delete(id);
        const res = await api.update(id, c.body);
        assertSecretHidden(res, c.body);
        if (c.valid) {
          counts.valid += 1;
          assert.equal(res.status, 200, res.text);
          const next = { ...previous, ...written(c.body) };
          let closed = closedAfterUpdate(previous, next, c.body);
          if (closed === undefined) {
            counts.closedUndecided += 1;
            closed = res.body.isClosed;
          }
          const expected = { ...next, isClosed: closed, updatedAt: res.body.updatedAt };
          assert.deepEqual(res.body, expected);
          assert.match(res.body.updatedAt, TIMESTAMP);
          assert.ok(
            Date.parse(res.body.updatedAt) > Date.parse(previous.updatedAt),
            "updatedAt moves forward on every update",
          );
          const read = await api.get(id);
          assertSecretHidden(read, c.body);
          assert.deepEqual(read.body, expected);
          known.set(id, read.body);
        } else {
          counts.invalid += 1;
          assert.deepEqual(
            { status: res.status, body: res.body },
            {
              status: 422,
              body: unprocessable(c.message),
            },
          );
          const read = await api.getOk(id);
          assert.deepEqual(read, previous, "a refused update changed the form");
          known.set(id, read);
        }
      }),
      params(),
    );
    reportCases(t, "update", counts, started);
    figure(t, "update cases with isClosed left open (DST gap)", counts.closedUndecided);
  });
});

describe("generated bodies on a free organization: paid settings set true are refused", () => {
  let api: Client;
  let organizationId: string;
  const usingPaid = (body: Body) => PAID_SETTINGS.filter((member) => body[member] === true);
  const refusal = (answer: Answer, body: Body) => {
    const used = usingPaid(body);
    assert.equal(answer.status, 403, answer.text);
    assert.ok(
      used.some((member) => {
        const expected = errorOf("forbidden", `${member}: needs the paid plan`);
        return JSON.stringify(answer.body) === JSON.stringify(expected);
      }),
      `403 naming one of ${used.join(", ")}: ${answer.text}`,
    );
  };
  /** Valid bodies, most of them with some paid settings forced on. */
  const bodies = (members: Record<string, Kind>, required: string[]) =>
    fc
      .tuple(validBody(members, required), fc.subarray(PAID_SETTINGS))
      .map(([body, forced]) => ({ ...body, ...Object.fromEntries(forced.map((m) => [m, true])) }));

  before(async () => {
    const tenant = await createTenant("free");
    api = client(testApp.app, tenant.fullKey);
    organizationId = tenant.org.id;
  });

  test("create", async (t) => {
    let forms = await storedForms(organizationId);
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(bodies(CREATE, ["name"]), async (body) => {
        const res = await api.create(body);
        if (res.status === 201) forms += 1;
        if (usingPaid(body).length > 0) {
          refused += 1;
          refusal(res, body);
          const now = await storedForms(organizationId);
          const expected = forms;
          forms = now;
          assert.equal(now, expected, "a refused create stored a form");
        } else {
          assert.equal(res.status, 201, res.text);
          assert.deepEqual(res.body, expectedCreated(res.body, body, organizationId));
        }
      }),
      { ...params(), numRuns: PLAN_RUNS },
    );
    figure(t, "free-plan create cases (refused)", `${PLAN_RUNS} (${refused})`);
  });

  test("update", async (t) => {
    const id = (await api.createOk({ name: "free plan form" })).id;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(bodies(UPDATE, []), async (body) => {
        const previous = await api.getOk(id);
        const res = await api.update(id, body);
        if (usingPaid(body).length > 0) {
          refused += 1;
          refusal(res, body);
          assert.deepEqual(await api.getOk(id), previous, "a refused update changed the form");
        } else {
          assert.equal(res.status, 200, res.text);
        }
      }),
      { ...params(), numRuns: PLAN_RUNS },
    );
    figure(t, "free-plan update cases (refused)", `${PLAN_RUNS} (${refused})`);
  });
});
