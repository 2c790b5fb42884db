import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError, invalid } from "./errors.ts";

// Fatal: bytes that are not UTF-8 are refused rather than silently replaced with U+FFFD, which
// would store something other than what the client sent (RFC 8259: JSON text is UTF-8).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Whether the request announces a body: a non-zero `Content-Length`, or a `Transfer-Encoding`.
 * A request without one is body-less whatever its `Content-Type` or `Content-Encoding` say.
 */
function announcesBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return (
    request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")
  );
}

/** Any coding but `identity` (the absence of one): bodies are read as they arrive, never decoded. */
function isEncoded(request: FastifyRequest): boolean {
  const coding = request.headers["content-encoding"];
  return coding !== undefined && !/^\s*(identity\s*)?$/i.test(coding);
}

/**
 * Replaces Fastify's JSON parser so that every failure is the spec's 422 with a member name.
 * `JSON.parse` defines `__proto__` as an own member instead of touching the prototype, and the
 * validator then refuses it by name like any other member the operation does not accept.
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  // Refused before the body is read: a compressed body would otherwise be read as JSON text (or
  // refused as UTF-8), and decoding one would let a small request grow past the body limit.
  app.addHook("preParsing", async (request, reply) => {
    if (isEncoded(request) && announcesBody(request)) {
      // RFC 7694: the 415 names the codings that are accepted.
      reply.header("Accept-Encoding", "identity");
      throw new AppError(
        "unsupported_media_type",
        "Content-Encoding: is not supported; send the body uncompressed",
      );
    }
  });
  // A request without a body (none sent, or zero bytes) to an operation that reads one. The
  // validator cannot tell: Fastify hands it `null` for an absent body, as for a JSON `null`.
  app.addHook("preValidation", async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) {
      throw invalid("body", "is empty");
    }
  });
  // JSON is the only body formdeck reads: anything else is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    const bytes = body as Buffer;
    // No body at all (a DELETE that names its type, say): the route decides if it needs one.
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
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
  // Any other type, or none, with a body: refused unread. Without one there is nothing to parse.
  app.addContentTypeParser("*", (request, _payload, done) => {
    if (announcesBody(request)) {
      done(new AppError("unsupported_media_type", "Content-Type: must be application/json"));
    } else {
      done(null, undefined);
    }
  });
}
