import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { FastifySchemaCompiler } from "fastify";
import { AppError, invalid } from "./errors.ts";
import {
  isAbsoluteUrl,
  isColor,
  isDate,
  isEmail,
  isSingleLine,
  isTime,
  isTimeZone,
  parseInstant,
} from "./formats.ts";
import { type ListParse, parseCountryList, parseDomainList, parseIpList } from "./list-formats.ts";

interface StringFormat {
  test: (value: string) => boolean;
  /** Why a value is refused, in the words of a `<member>: <reason>` message. */
  reason: string | ((value: string) => string);
}

const listFormat = (parse: (value: string) => ListParse<unknown>): StringFormat => ({
  test: (value) => "entries" in parse(value),
  reason: (value) => {
    const parsed = parse(value);
    return "reason" in parsed ? parsed.reason : "is not valid";
  },
});

/** Why each format refuses a value, in the words of a `<member>: <reason>` message. */
export const FORMATS: Record<string, StringFormat> = {
  email: { test: isEmail, reason: "must be an email address" },
  "single-line": {
    test: isSingleLine,
    reason: "must not contain line breaks or control characters",
  },
  date: { test: (v) => v === "" || isDate(v), reason: "must be a date in the form YYYY-MM-DD" },
  "time-hhmm": { test: (v) => v === "" || isTime(v), reason: "must be a time in the form HH:mm" },
  timezone: { test: (v) => v === "" || isTimeZone(v), reason: "must be an IANA time zone" },
  color: { test: isColor, reason: "must be a color in the form #rgb or #rrggbb" },
  "http-url": {
    test: (v) => v === "" || isAbsoluteUrl(v, ["http:", "https:"]),
    reason: "must be an absolute http or https URL",
  },
  "https-url": {
    test: (v) => v === "" || isAbsoluteUrl(v, ["https:"]),
    reason: "must be an absolute https URL",
  },
  instant: {
    test: (v) => parseInstant(v) !== null,
    reason: "must be an ISO 8601 instant with a time zone, such as 2026-11-22T04:51:21Z",
  },
  "domain-list": listFormat(parseDomainList),
  "ip-list": listFormat(parseIpList),
  "country-list": listFormat(parseCountryList),
};

// Strict types: no coercion, no defaults, nothing removed. What the client sent is what is checked.
// `verbose`: a format's reason may quote the entry of a list that it refuses.
const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  useDefaults: false,
  strict: false,
  verbose: true,
});
for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format.test);

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  boolean: "a boolean",
  integer: "an integer",
  number: "a number",
  array: "an array",
  object: "an object",
  null: "null",
};

/** `/emailsToNotify/2` → `emailsToNotify[2]`; the body itself is `body`. */
function memberName(instancePath: string, child?: string): string {
  // Only the pointer's segments are escaped (RFC 6901); `child` is a member name as sent.
  const segments = instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (child !== undefined) segments.push(child);
  if (segments.length === 0) return "body";
  return segments.reduce(
    (path, s, i) => (/^\d+$/.test(s) && i > 0 ? `${path}[${s}]` : i ? `${path}.${s}` : s),
    "",
  );
}

/** Turns Ajv's first error into the spec's message. `unknownReason` explains refused members. */
function describe(error: ErrorObject, unknownReason: (member: string) => string): AppError {
  const member = memberName(error.instancePath);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return invalid(memberName(error.instancePath, String(p.missingProperty)), "is required");
    case "additionalProperties": {
      const name = String(p.additionalProperty);
      return invalid(memberName(error.instancePath, name), unknownReason(name));
    }
    case "type": {
      const types = String(p.type)
        .split(",")
        .map((t) => TYPE_NAMES[t] ?? t);
      return invalid(member, `must be ${types.join(" or ")}`);
    }
    case "enum":
      return invalid(member, `must be one of ${(p.allowedValues as unknown[]).join(", ")}`);
    case "format": {
      const reason = FORMATS[String(p.format)]?.reason ?? `must be a ${p.format}`;
      return invalid(member, typeof reason === "string" ? reason : reason(String(error.data)));
    }
    case "minLength":
      return invalid(
        member,
        p.limit === 1 ? "must not be empty" : `must be at least ${p.limit} characters`,
      );
    case "maxLength":
      return invalid(member, `must be at most ${p.limit} characters`);
    case "minimum":
      return invalid(member, `must be at least ${p.limit}`);
    case "maximum":
      return invalid(member, `must be at most ${p.limit}`);
    case "minItems":
      return invalid(
        member,
        p.limit === 1 ? "must not be empty" : `must have at least ${p.limit} items`,
      );
    case "maxItems":
      return invalid(member, `must have at most ${p.limit} items`);
    case "uniqueItems":
      return invalid(member, "must not repeat an item");
    case "pattern":
      // The schemas' only pattern is the name's `\S`.
      return invalid(member, "must not be blank");
    default:
      return invalid(member, error.message ?? "is not valid");
  }
}

// Members of the record that only the server writes.
const READ_ONLY = new Set([
  "id",
  "organizationId",
  "createdAt",
  "updatedAt",
  "submissions",
  "webhookEnabled",
  "webhookUrl",
]);

const refused = (name: string) => (READ_ONLY.has(name) ? "is read-only" : "is not allowed");

/**
 * Every string must survive a round trip through PostgreSQL unchanged: no NUL characters, no
 * lone surrogates. Walks without recursion so that deep nesting cannot exhaust the stack.
 */
export function findBadText(value: unknown, root: string): AppError | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string];
    if (typeof item === "string") {
      if (item.includes("\u0000")) return invalid(path, "must not contain NUL characters");
      if (!item.isWellFormed()) return invalid(path, "must be valid Unicode text");
      // An invisible byte order mark the embedded store would drop on reading: refused on both
      // stores, so that what is stored is always what is read back.
      if (item.startsWith("\uFEFF")) return invalid(path, "must not start with U+FEFF");
    } else if (Array.isArray(item)) {
      for (const [i, v] of item.entries()) stack.push([v, `${path}[${i}]`]);
    } else if (item !== null && typeof item === "object") {
      for (const [k, v] of Object.entries(item)) {
        const child = path === "body" ? k : `${path}.${k}`;
        if (k.includes("\u0000") || !k.isWellFormed())
          return invalid(path, "has a member name that is not valid text");
        stack.push([v, child]);
      }
    }
  }
  return null;
}

/**
 * Whether the query string of `url` percent-decodes to valid UTF-8 text. The query parser keeps
 * what it cannot decode as it is, so `?search=%FF` would otherwise search for the text "%FF".
 */
export function hasDecodableQuery(url: string): boolean {
  const start = url.indexOf("?");
  if (start === -1) return true;
  try {
    decodeURIComponent(url.slice(start + 1));
    return true;
  } catch {
    return false;
  }
}

type Schema = Record<string, unknown> & { properties?: Record<string, Record<string, unknown>> };

/**
 * Query strings arrive as text. Integer parameters must be plain decimal (`^[1-9][0-9]*$`, so no
 * `1e3`, `0x10` or `1.5`), a parameter may appear once, and unknown parameters are refused.
 */
function prepareQuery(schema: Schema, query: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties ?? {};
  const prepared: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    // Own members only: `__proto__`, `constructor` or `toString` would otherwise be found on
    // Object.prototype and taken for parameters the route declares.
    const property = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (!property) throw invalid(name, "is not a known parameter");
    if (Array.isArray(value)) throw invalid(name, "must be given once");
    const bad = findBadText(value, name);
    if (bad) throw bad;
    if (property.type !== "integer") {
      prepared[name] = value;
      continue;
    }
    const text = String(value);
    if (!/^[1-9][0-9]*$/.test(text)) throw invalid(name, "must be a whole number greater than 0");
    const maximum = property.maximum as number;
    // Compared as text first: a huge value would lose its digits as a Number.
    if (text.length > String(maximum).length || Number(text) > maximum) {
      throw invalid(name, `must be at most ${maximum}`);
    }
    prepared[name] = Number(text);
  }
  return prepared;
}

/** Fastify's validator compiler: strict Ajv for bodies and params, `prepareQuery` first for queries. */
export const validatorCompiler: FastifySchemaCompiler<Schema> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = ajv.compile(schema);
  return (data: unknown) => {
    try {
      let value = data;
      if (httpPart === "querystring") value = prepareQuery(schema, data as Record<string, unknown>);
      if (httpPart === "body") {
        const bad = findBadText(value, "body");
        if (bad) throw bad;
      }
      if (validate(value)) return { value };
      const first = validate.errors?.[0];
      return { error: first ? describe(first, refused) : invalid("body", "is not valid") };
    } catch (error) {
      if (error instanceof AppError) return { error };
      throw error;
    }
  };
};
