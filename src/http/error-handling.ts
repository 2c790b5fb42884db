import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isStoreUnreachable } from "../db/database.ts";
import { AppError, errorBody, undecodableUrl } from "./errors.ts";
import { NO_SNIFF } from "./security-headers.ts";

/** Fastify's own errors that a client can cause, and what each one says to that client. */
function fromFramework(error: FastifyError, request: FastifyRequest): AppError | null {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("unsupported_media_type", "Content-Type: must be application/json");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError(
        "payload_too_large",
        `body: must be at most ${request.server.initialConfig.bodyLimit} bytes`,
      );
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("unprocessable_entity", "body: is not valid JSON");
    case "FST_ERR_BAD_URL":
      return undecodableUrl();
  }
  // Fastify's messages can quote the whole URL back; the client sent it, and needs no copy.
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError("bad_request", "request: is not valid");
  }
  return null;
}

/** For errors Fastify raises before routing (a URL that cannot be decoded). */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known =
    fromFramework(error, request) ?? new AppError("bad_request", "request: is not valid");
  // These replies skip the app's onSend hooks, which set the request id everywhere else.
  return reply
    .code(known.statusCode)
    .header("X-Request-Id", request.id)
    .header(...NO_SNIFF)
    .send(errorBody(known.code, known.message));
}

/**
 * Three tiers, as in unkey: our own errors as they are; Fastify's errors that a client caused
 * mapped to ours; anything else logged and answered as a generic 500 (or a 503 when the database
 * could not be reached, with the `Retry-After` set on `reply`).
 */
export function toAppError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known = error instanceof AppError ? error : fromFramework(error, request);
  if (known) return known;
  if (isStoreUnreachable(error)) {
    // Nothing the client did: the same request may succeed once the database is back.
    request.log.warn({ err: error }, "request failed: the database is not reachable");
    reply.header("Retry-After", "1");
    return new AppError("service_unavailable", "store: is not reachable");
  }
  request.log.error({ err: error }, "request failed");
  return new AppError(
    "internal_server_error",
    "internal error: the request could not be completed",
  );
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = toAppError(error, request, reply);
    return reply.code(known.statusCode).send(errorBody(known.code, known.message));
  });

  const noSuchRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0];
    return reply
      .code(404)
      .send(errorBody("not_found", `route: ${request.method} ${path} does not exist`));
  };
  // Answered before the body is read: a body sent to a route that does not exist is not parsed,
  // so it cannot turn the 404 into a 413 or a 422.
  // Callback style, as it waits for nothing: a reply sent here ends the request without `done`.
  app.addHook("onRequest", (request, reply, done) => {
    if (request.is404) noSuchRoute(request, reply);
    else done();
  });
  app.setNotFoundHandler(noSuchRoute);
}

const PARSER_ERRORS: Record<string, AppError> = {
  HPE_HEADER_OVERFLOW: new AppError(
    "headers_too_large",
    "headers: are larger than the server accepts",
  ),
  ERR_HTTP_REQUEST_TIMEOUT: new AppError("request_timeout", "request: was not received in time"),
};

/** Errors Node's HTTP parser raises before Fastify sees a request: bad or oversized headers. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex) {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const known =
    PARSER_ERRORS[error.code ?? ""] ?? new AppError("bad_request", "request: is not valid HTTP");
  const body = JSON.stringify(errorBody(known.code, known.message));
  socket.end(
    `HTTP/1.1 ${known.statusCode} ${STATUS_CODES[known.statusCode]}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n" +
      `${NO_SNIFF[0]}: ${NO_SNIFF[1]}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
