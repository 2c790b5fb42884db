import type { FastifyInstance } from "fastify";

/** On every answer: a browser must never read a JSON error as HTML or script. */
export const NO_SNIFF = ["X-Content-Type-Options", "nosniff"] as const;

const DOCS_PREFIX = "/docs";

/**
 * The reference page loads only its own scripts, styles and the document; Swagger UI sets inline
 * styles and shows images as `data:` URLs. No other site may frame it (clickjacking of "Try it
 * out", which sends requests with a key typed into the page).
 */
const DOCS_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export function registerSecurityHeaders(app: FastifyInstance) {
  app.addHook("onSend", (request, reply, _payload, done) => {
    reply.header(...NO_SNIFF);
    // An answer to a keyed request is that organization's data: no cache may keep or share it.
    if (request.routeOptions.config.scope) reply.header("Cache-Control", "no-store");
    if (request.routeOptions.url?.startsWith(DOCS_PREFIX)) {
      reply.header("Content-Security-Policy", DOCS_POLICY);
    }
    done();
  });
}
