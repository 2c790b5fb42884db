import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The request's id, answered in `X-Request-Id` and written in its log lines: the client's own
 * when it sent a plausible one (a proxy's, to follow a request across services), else a new one.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
}
