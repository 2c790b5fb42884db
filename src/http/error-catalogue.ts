import type { ErrorCode } from "./errors.ts";

/**
 * When each error is answered, which decides its headers: `socket` by Node's HTTP parser before
 * any route is known (no request id); `url` before the key check; `key` by the key check itself;
 * `route` after the key was accepted (so with the rate-limit headers); `any` at any step.
 */
type Stage = "socket" | "url" | "key" | "route" | "any";

interface ErrorEntry {
  stage: Stage;
  /** The response's description in the document. */
  when: string;
  /** The example's message, as the server writes it. */
  example: string;
}

/** Every error code: when it is answered, and an example as the server really sends it. */
export const ERROR_CATALOGUE: Record<ErrorCode, ErrorEntry> = {
  bad_request: {
    stage: "url",
    when: "The request cannot be read: its path or query is not valid percent-encoded UTF-8, or it is not valid HTTP.",
    example: "url: is not valid percent-encoding",
  },
  unauthorized: {
    stage: "key",
    when: "The `api-key` header is missing, or is not a valid key.",
    example: "api-key: is not a valid key",
  },
  forbidden: {
    stage: "route",
    when: "The key's scope does not allow this operation, or a paid-plan setting is used on the free plan.",
    example: "api-key: this key has scope read; this operation needs scope full",
  },
  form_closed: {
    stage: "route",
    when: "The form takes no submissions: closed by hand, by its auto-close time, or at its limit of responses.",
    example: "form: is closed",
  },
  captcha_failed: {
    stage: "route",
    when: "The form requires a captcha and no token was sent, or the provider refused it.",
    example: "captcha: a token is required",
  },
  not_found: {
    stage: "route",
    when: "No form with this id exists in the key's organization.",
    example: "form: not found",
  },
  request_timeout: {
    stage: "socket",
    when: "The request was not received completely within the server's request timeout.",
    example: "request: was not received in time",
  },
  payload_too_large: {
    stage: "route",
    when: "The body is larger than the server's body limit.",
    example: "body: must be at most 1048576 bytes",
  },
  unsupported_media_type: {
    stage: "route",
    when: "The body is not `application/json`.",
    example: "Content-Type: must be application/json",
  },
  expectation_failed: {
    stage: "socket",
    when: "The request has an `Expect` header other than `100-continue`.",
    example: "Expect: only 100-continue is supported",
  },
  unprocessable_entity: {
    stage: "route",
    when: "A query parameter, header or body member is not valid; the message is `<member>: <reason>`.",
    example: "name: is required",
  },
  rate_limit_exceeded: {
    stage: "key",
    when: "The key's quota (or, without a valid key, the client address's) is spent for this window.",
    example: "rate limit: 600 requests per window exceeded; retry in 17 s",
  },
  headers_too_large: {
    stage: "socket",
    when: "The request's headers are larger than the server accepts.",
    example: "headers: are larger than the server accepts",
  },
  internal_server_error: {
    stage: "any",
    when: "An unexpected error; nothing was changed.",
    example: "internal error: the request could not be completed",
  },
  service_unavailable: {
    stage: "any",
    when: "The store cannot be reached or is busy; the same request may succeed later.",
    example: "store: is not reachable",
  },
};
