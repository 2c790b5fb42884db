import type { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { AnySchema } from "ajv/dist/core.js";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { OpenAPIBackend, type Operation } from "openapi-backend";
import { FORMATS } from "../../src/http/validation.ts";

type Header = { required?: boolean };
type DocumentedResponse = {
  headers?: Record<string, Header>;
  content?: Record<string, unknown>;
};

/**
 * Ajv for JSON Schema 2020-12 (OpenAPI 3.1's dialect) that compiles a schema once however often it
 * is given: openapi-backend hands it a fresh copy of each operation's schemas, and most of them
 * (the error bodies, the headers) are the same on every operation.
 */
function compilingOnce(ajv: Ajv2020): Ajv2020 {
  const compiled = new Map<string, ReturnType<Ajv2020["compile"]>>();
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: AnySchema) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      validate = compile(schema);
      compiled.set(key, validate);
    }
    return validate;
  }) as Ajv2020["compile"];
  return ajv;
}

/**
 * Checks every response against the OpenAPI document the app serves, with openapi-backend's
 * validators (JSON Schema 2020-12, as OpenAPI 3.1 uses): its status must be documented for its
 * operation, its JSON body must match that status's schema, its documented headers must match
 * their schemas, and those marked required must be there. Routes the document leaves out (its
 * own page, unknown paths) are not checked.
 */
export async function responseChecker(document: unknown) {
  const definition = structuredClone(document) as ConstructorParameters<
    typeof OpenAPIBackend
  >[0]["definition"];
  const ajv = compilingOnce(new Ajv2020({ strict: false, allErrors: true }));
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format.test);
  // The record's timestamps: ISO 8601 in UTC with milliseconds, as decisions.md fixes them.
  ajv.addFormat("date-time", (value) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value),
  );
  const api = new OpenAPIBackend({
    definition,
    // Skips its own check of the document, written for OpenAPI 3.0 (it refuses 3.1's type
    // arrays); openapi.test.ts checks the document against 3.1 instead.
    quick: true,
    // As Fastify routes: `/api/v1/forms/` is not `/api/v1/forms`.
    ignoreTrailingSlashes: false,
    strict: true,
    // One instance for every operation, so that a schema shared by many is compiled once.
    customizeAjv: () => ajv as unknown as Ajv,
  });
  await api.init();
  // All before any test's requests: compiled on first use, they would slow the requests of a test
  // that counts on a rate-limit window.
  for (const { operationId = "" } of api.getOperations()) {
    api.validator.getStatusBasedResponseValidatorForOperation(operationId);
    api.validator.getResponseHeadersValidatorForOperation(operationId);
  }

  return (request: InjectOptions, response: LightMyRequestResponse): string[] => {
    const method = String(request.method ?? "GET").toLowerCase();
    if (method === "head") return [];
    // The URL the server routed, as inject normalized it (`/forms/..` is `/`), split by hand:
    // `new URL` would read a path such as `//x` as a host.
    const url = String(response.raw?.req?.url ?? request.url ?? "/");
    const pathname = url.split("?")[0] ?? "/";
    const operation = api.matchOperation({
      method,
      path: pathname,
      headers: {},
      query: url.slice(pathname.length + 1),
    }) as Operation | undefined;
    if (!operation) return [];
    const name = `${operation.operationId} (${method.toUpperCase()} ${pathname})`;
    const status = response.statusCode;
    const documented = (operation.responses as Record<string, DocumentedResponse>)[String(status)];
    if (!documented) return [`${name}: status ${status} is not documented`];

    const problems: string[] = [];
    for (const [header, spec] of Object.entries(documented.headers ?? {})) {
      if (spec.required && response.headers[header.toLowerCase()] === undefined) {
        problems.push(`${name} ${status}: header ${header} is documented as always sent`);
      }
    }
    const headers = api.validateResponseHeaders(response.headers, operation, {
      statusCode: status,
    });
    for (const error of headers.errors ?? []) {
      problems.push(`${name} ${status}: header ${error.instancePath} ${error.message}`);
    }

    const type = String(response.headers["content-type"] ?? "").split(";")[0] ?? "";
    if (!documented.content) {
      if (response.body !== "") problems.push(`${name} ${status}: a body where none is documented`);
      return problems;
    }
    if (!documented.content[type]) {
      problems.push(`${name} ${status}: Content-Type ${type} is not documented`);
      return problems;
    }
    if (type === "application/json") {
      const body = api.validateResponse(response.json(), operation, status);
      for (const error of body.errors ?? []) {
        problems.push(`${name} ${status}: body${error.instancePath} ${error.message}`);
      }
    }
    return problems;
  };
}

type Check = Awaited<ReturnType<typeof responseChecker>>;

/** One checker per document: every test app of a test file serves the same one. */
const checkers = new Map<string, Promise<Check>>();

/**
 * Readies the app and wraps its `inject`, so that a response that does not conform to the
 * document fails the request, and with it the test that sent it.
 */
export async function checkEveryResponse(app: FastifyInstance) {
  await app.ready();
  const document = JSON.stringify(app.swagger());
  let checker = checkers.get(document);
  if (!checker) {
    checker = responseChecker(JSON.parse(document));
    checkers.set(document, checker);
  }
  const check = await checker;
  const inject = app.inject.bind(app) as (
    options: InjectOptions,
  ) => Promise<LightMyRequestResponse>;
  const checked = async (options: InjectOptions | string) => {
    const request = typeof options === "string" ? { url: options } : options;
    const response = await inject(request);
    const problems = check(request, response);
    if (problems.length > 0) {
      throw new Error(`the response does not match the OpenAPI document:\n${problems.join("\n")}`);
    }
    return response;
  };
  app.inject = checked as unknown as FastifyInstance["inject"];
}
