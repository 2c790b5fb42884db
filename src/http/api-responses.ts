import { type TSchema, Type } from "typebox";
import { ERROR_CATALOGUE } from "./error-catalogue.ts";
import { codeToStatus, type ErrorCode } from "./errors.ts";

/**
 * What the OpenAPI document says about every response: which statuses an operation can answer,
 * the body and an example of each, and the headers that come with it. Routes declare only what is
 * particular to them (their success responses and the error codes their own checks give); what
 * every request, every keyed request and every request with a body can meet is added here, so a
 * new route is documented completely by construction.
 */

/** A response header as a route schema carries it; `required` is lifted out of it by openapi.ts. */
export interface HeaderSchema {
  type: "string";
  description: string;
  pattern?: string;
  enum?: string[];
  required?: boolean;
}

type Headers = Record<string, HeaderSchema>;

const requestId = (required: boolean): Headers => ({
  "X-Request-Id": {
    type: "string",
    description:
      "The request's id, as logged: the client's own `X-Request-Id` when it is 1 to 64 letters, " +
      "digits, `_`, `.` or `-`, else one the server chose.",
    required,
  },
});

const rateLimit = (required: boolean): Headers => ({
  "X-RateLimit-Limit": {
    type: "string",
    pattern: "^[0-9]+$",
    description: "Requests allowed in the current window.",
    required,
  },
  "X-RateLimit-Remaining": {
    type: "string",
    pattern: "^[0-9]+$",
    description: "Requests remaining in the current window.",
    required,
  },
  "X-RateLimit-Reset": {
    type: "string",
    pattern: "^[0-9]+$",
    description: "Unix time, in seconds, at which the window resets.",
    required,
  },
});

const retryAfter: Headers = {
  "Retry-After": {
    type: "string",
    pattern: "^[1-9][0-9]*$",
    description: "Whole seconds to wait before sending the request again.",
    required: true,
  },
};

/** `Location` of a created form. */
export const LOCATION: Headers = {
  Location: {
    type: "string",
    description: "The new form's address, `/api/v1/forms/{formId}`.",
    required: true,
  },
};

/** `Idempotent-Replayed` on a create played back from its `Idempotency-Key`. */
export const REPLAYED: Headers = {
  "Idempotent-Replayed": {
    type: "string",
    enum: ["true"],
    description:
      "`true` when this is the stored response of an earlier request with the same " +
      "`Idempotency-Key`; absent otherwise.",
  },
};

/** Who may call an operation: anyone, or a key of at least this scope. */
export type Access = "public" | "read" | "full";

/** The headers an error response carries on an operation of this access. */
function errorHeaders(code: ErrorCode, access: Access): Headers {
  const { stage } = ERROR_CATALOGUE[code];
  if (stage === "socket") return {};
  const keyed = access !== "public";
  const headers = requestId(stage !== "url");
  if (code === "rate_limit_exceeded") return { ...headers, ...rateLimit(true), ...retryAfter };
  if (code === "service_unavailable") Object.assign(headers, retryAfter);
  if (keyed && stage === "route") return { ...headers, ...rateLimit(true) };
  if (keyed && stage === "any") return { ...headers, ...rateLimit(false) };
  return headers;
}

/**
 * The body of the error codes one status carries for an operation (403 is `forbidden`,
 * `form_closed` or `captcha_failed` on the intake): the spec's error shape with those codes only,
 * and an example of each.
 */
function errorBodySchema(codes: readonly ErrorCode[]) {
  return Type.Object(
    {
      error: Type.Object({
        code: Type.Unsafe<ErrorCode>({ type: "string", enum: [...codes] }),
        message: Type.String({ description: "Human readable; `<member>: <reason>` for 422." }),
      }),
    },
    {
      examples: codes.map((code) => ({ error: { code, message: ERROR_CATALOGUE[code].example } })),
    },
  );
}

/** The examples of a media type object, by code: where the schema's own are not lifted. */
const namedExamples = (codes: readonly ErrorCode[]) =>
  Object.fromEntries(
    codes.map((code) => [
      code,
      { value: { error: { code, message: ERROR_CATALOGUE[code].example } } },
    ]),
  );

/** The codes any request can meet, whatever its route: it is read and routed before anything. */
const ANY_REQUEST: ErrorCode[] = [
  "bad_request",
  "request_timeout",
  "expectation_failed",
  "headers_too_large",
  "internal_server_error",
];

/** The codes of the key check, on keyed operations. */
const KEY_CHECK: ErrorCode[] = ["unauthorized", "rate_limit_exceeded"];

/** The codes of an operation that reads a JSON body. */
export const WITH_BODY: ErrorCode[] = [
  "payload_too_large",
  "unsupported_media_type",
  "unprocessable_entity",
];

/** A success response: its body schema (or `Type.Null()` for none), description and headers. */
export function success<T extends TSchema>(schema: T, description: string, headers: Headers = {}) {
  return { ...schema, description, headers };
}

/**
 * An operation's OpenAPI fields, its route config and its responses. `responses` takes the codes
 * the operation's own checks give (422 for its query or body, 404 for its id, 503 for the
 * store...); the codes of every request, of the key check and of the scope follow from `access`.
 */
export function apiOperation(operation: {
  operationId: string;
  summary: string;
  description: string;
  tags: [string, ...string[]];
  access: Access;
  /** Browsers are answered HTML pages for errors (the intake): each error may be either. */
  htmlErrors?: boolean;
}) {
  const { access, htmlErrors = false, ...documented } = operation;
  const keyed = access !== "public";
  const implied = [...ANY_REQUEST, ...(keyed ? KEY_CHECK : [])];
  // A read key is refused the full scope's operations; any key may call a read operation.
  if (access === "full") implied.push("forbidden");
  const successHeaders = { ...requestId(true), ...(keyed ? rateLimit(true) : {}) };
  return {
    config: (keyed ? { scope: access } : {}) as { scope?: Exclude<Access, "public"> },
    schema: { ...documented, security: keyed ? [{ apiKey: [] }] : [] },
    /** The route schema's `response`: the successes given, and every error it can answer. */
    responses<S extends Record<number, TSchema>>(successes: S, ...errors: ErrorCode[]) {
      const codes = [...new Set([...implied, ...errors])].sort(
        (a, b) => codeToStatus[a] - codeToStatus[b],
      );
      const withHeaders = Object.fromEntries(
        Object.entries(successes).map(([status, schema]) => [
          status,
          {
            ...schema,
            headers: { ...successHeaders, ...(schema as { headers?: Headers }).headers },
          },
        ]),
      ) as unknown as S;
      const byStatus = new Map<number, ErrorCode[]>();
      for (const code of codes) {
        byStatus.set(codeToStatus[code], [...(byStatus.get(codeToStatus[code]) ?? []), code]);
      }
      const failures: Record<string, TSchema> = {};
      for (const [status, sharing] of byStatus) {
        const description = sharing.map((code) => ERROR_CATALOGUE[code].when).join(" Or: ");
        // The first code's headers: codes that share a status are answered at the same step.
        const headers = errorHeaders(sharing[0] as ErrorCode, access);
        const body = errorBodySchema(sharing);
        failures[status] = htmlErrors
          ? ({
              description,
              headers,
              content: {
                "application/json": { schema: body, examples: namedExamples(sharing) },
                "text/html": {
                  schema: Type.String({ description: "A page saying what went wrong" }),
                },
              },
            } as unknown as TSchema)
          : { ...body, description, headers };
      }
      return { ...withHeaders, ...failures };
    },
  };
}
