import type { FastifyInstance } from "fastify";
import { invalid } from "./errors.ts";

// Fatal: bytes that are not UTF-8 are refused rather than silently replaced with U+FFFD, which
// would store something other than what the client sent (RFC 8259: JSON text is UTF-8).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Replaces Fastify's JSON parser so that every failure is the spec's 422 with a member name.
 * `JSON.parse` defines `__proto__` as an own member instead of touching the prototype, and the
 * validator then refuses it by name like any other member the operation does not accept.
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  // JSON is the only body formdeck reads: anything else is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(invalid("body", "is not valid UTF-8"), undefined);
      return;
    }
    // A leading byte order mark is tolerated, as RFC 8259 allows.
    text = text.replace(/^\uFEFF/, "");
    try {
      done(null, JSON.parse(text));
    } catch {
      done(invalid("body", "is not valid JSON"), undefined);
    }
  });
}
