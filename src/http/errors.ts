/** The closed set of error codes formdeck answers with, and the status each one carries. */
export const codeToStatus = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  form_closed: 403,
  captcha_failed: 403,
  not_found: 404,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  unprocessable_entity: 422,
  rate_limit_exceeded: 429,
  headers_too_large: 431,
  internal_server_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof codeToStatus;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
    this.statusCode = codeToStatus[code];
  }
}

/** A 422 whose message has the spec's `<member>: <reason>` form. */
export function invalid(member: string, reason: string): AppError {
  return new AppError("unprocessable_entity", `${member}: ${reason}`);
}

export const formNotFound = () => new AppError("not_found", "form: not found");

/** A path or query string that does not percent-decode, wherever it is caught. */
export const undecodableUrl = () =>
  new AppError("bad_request", "url: is not valid percent-encoding");

export function errorBody(code: ErrorCode, message: string) {
  return { error: { code, message } };
}
