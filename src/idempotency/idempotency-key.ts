import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { invalid } from "../http/errors.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Sent, as `true`, on a response that was stored by an earlier request and is played back. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

const MAX_LENGTH = 255;

/**
 * The route's headers schema, for the OpenAPI document. It only says that the header is a string:
 * the rules are checked by `idempotencyKeyOf`, whose messages name the header as clients write it.
 * Other headers are allowed, as everywhere in HTTP.
 */
export const IdempotencyHeaders = Type.Object(
  {
    [IDEMPOTENCY_HEADER]: Type.Optional(
      Type.String({
        description:
          "Optional. 1 to 255 printable ASCII characters, chosen by the client (a UUID is a good key). " +
          "A request repeated with the same key and the same body, within at least 24 hours, creates " +
          "nothing and is answered with the first response (status, body and Location) plus " +
          `\`${REPLAYED_HEADER}: true\`. The same key with a different body is a 422.`,
      }),
    ),
  },
  { additionalProperties: true },
);

/** The request's Idempotency-Key, or undefined when it has none; 422 when it is not a valid key. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const name = IDEMPOTENCY_HEADER.toLowerCase();
  const raw = request.raw.rawHeaders;
  let occurrences = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) occurrences++;
  // Node joins repeated headers with ", ": two keys would silently become a third one.
  if (occurrences > 1) throw invalid(IDEMPOTENCY_HEADER, "must be given once");
  const value = request.headers[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(IDEMPOTENCY_HEADER, "must be given once");
  if (value === "") throw invalid(IDEMPOTENCY_HEADER, "must not be empty");
  if (value.length > MAX_LENGTH) {
    throw invalid(IDEMPOTENCY_HEADER, `must be at most ${MAX_LENGTH} characters`);
  }
  if (!/^[\x20-\x7E]+$/.test(value)) {
    throw invalid(IDEMPOTENCY_HEADER, "must be printable ASCII characters");
  }
  return value;
}

/**
 * The JSON text of `value` with every object's members sorted by name: two bodies that are the
 * same JSON value (whatever their member order, white space or number spelling) give one text.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonicalJson(object[name])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What identifies a request's body under its key: SHA-256 of its canonical JSON, in hex. */
export function requestHash(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}
