import { invalid } from "../http/errors.ts";
import { findBadText } from "../http/validation.ts";

/** A submission's fields in the order received: a repeated name is one entry, its values an array. */
export type SubmittedFields = [name: string, value: unknown][];

/** A file sent with a submission, as check 8 sees it: `type` as detected, `size` as stored. */
export interface SubmittedFile {
  field: string;
  name: string;
  type: string;
  size: number;
}

/** A submission's files in the order received. */
export type SubmittedFiles = SubmittedFile[];

/** Values in one body, each value of a repeated name counted. */
export const MAX_FIELDS = 1_000;
export const MAX_FIELD_NAME_LENGTH = 1_000;
/** Levels of arrays and objects inside one JSON answer. */
export const MAX_JSON_DEPTH = 32;

export const INTAKE_MEDIA_TYPES = [
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "application/json",
] as const;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function decodeUtf8(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw invalid("body", "is not valid UTF-8");
  }
}

export const tooMany = () => invalid("body", `must have at most ${MAX_FIELDS} fields`);

/** Collects name/value pairs, in order; a name given again turns its value into an array. */
export class FieldCollector {
  private readonly values = new Map<string, string | string[]>();
  private count = 0;

  add(name: string, value: string) {
    if (name.length > MAX_FIELD_NAME_LENGTH) {
      throw invalid("body", `has a field name longer than ${MAX_FIELD_NAME_LENGTH} characters`);
    }
    if (++this.count > MAX_FIELDS) throw tooMany();
    const previous = this.values.get(name);
    if (previous === undefined) {
      this.values.set(name, value);
    } else if (Array.isArray(previous)) {
      previous.push(value);
    } else {
      this.values.set(name, [previous, value]);
    }
  }

  fields(): SubmittedFields {
    return [...this.values];
  }
}

export function parseUrlEncoded(body: Buffer): SubmittedFields {
  const text = decodeUtf8(body);
  const pairs = text.split("&").filter((pair) => pair !== "");
  // Counted before anything is decoded: a body of 10,000 fields is refused at once.
  if (pairs.length > MAX_FIELDS) throw tooMany();
  const collector = new FieldCollector();
  for (const pair of pairs) {
    const equals = pair.indexOf("=");
    const [rawName, rawValue] =
      equals === -1 ? [pair, ""] : [pair.slice(0, equals), pair.slice(equals + 1)];
    collector.add(decodeComponent(rawName), decodeComponent(rawValue));
  }
  return collector.fields();
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    // A bad escape, or escapes that are not UTF-8 (a lone surrogate's bytes among them).
    throw invalid("body", "is not valid percent-encoding of UTF-8 text");
  }
}

export function parseJsonObject(body: Buffer): SubmittedFields {
  const text = decodeUtf8(body).replace(/^\uFEFF/, "");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("body", "is not valid JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid("body", "must be a JSON object");
  }
  // JSON.parse makes `__proto__` an own member like any other; entries keep it as a plain name.
  // Object.entries puts integer-like names first: the text gives the order the answers were sent.
  const byName = new Map(Object.entries(value));
  if (byName.size > MAX_FIELDS) throw tooMany();
  const fields: SubmittedFields = memberNamesInOrder(text).map((name) => [name, byName.get(name)]);
  for (const [name, answer] of fields) {
    if (name.length > MAX_FIELD_NAME_LENGTH) {
      throw invalid("body", `has a field name longer than ${MAX_FIELD_NAME_LENGTH} characters`);
    }
    requireShallow(name, answer);
  }
  return fields;
}

/**
 * The names of the members of the object that `text` (valid JSON, an object) holds, in the order
 * written; a name written twice once, where it first appears (JSON.parse keeps its last value).
 */
function memberNamesInOrder(text: string): string[] {
  const names = new Set<string>();
  let depth = 0;
  let expectName = true;
  for (let i = text.indexOf("{") + 1; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
      if (depth === 0 && expectName) names.add(JSON.parse(text.slice(start, i + 1)) as string);
      expectName = false;
    } else if (char === "{" || char === "[") {
      depth++;
    } else if (char === "}" || char === "]") {
      if (depth-- === 0) break;
    } else if (char === "," && depth === 0) {
      expectName = true;
    }
  }
  return [...names];
}

/** Without recursion, so that a deep value cannot exhaust the stack here or later. */
function requireShallow(name: string, answer: unknown) {
  const stack: [unknown, number][] = [[answer, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw invalid(name, `must be nested at most ${MAX_JSON_DEPTH} levels deep`);
    }
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
}

/** Every name and value must survive a round trip through the store: no NUL, no lone surrogate. */
export function requireStorableText(fields: SubmittedFields) {
  for (const [name, value] of fields) {
    if (name.includes("\u0000") || !name.isWellFormed()) {
      throw invalid("body", "has a field name that is not valid text");
    }
    const bad = findBadText(value, name);
    if (bad) throw bad;
  }
}
