import type { FastifyInstance } from "fastify";
import { invalid } from "./errors.ts";

/**
 * Replaces Fastify's JSON parser so that every failure is the spec's 422 with a member name.
 * `JSON.parse` defines `__proto__` as an own member instead of touching the prototype, and the
 * validator then refuses it by name like any other member the operation does not accept.
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  // JSON is the only body formdeck reads: anything else is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    // A leading byte order mark is tolerated, as RFC 8259 allows.
    const text = (body as string).replace(/^\uFEFF/, "");
    try {
      done(null, JSON.parse(text));
    } catch {
      done(invalid("body", "is not valid JSON"), undefined);
    }
  });
}
