import { Ajv2020 } from "ajv/dist/2020.js";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { OpenAPIBackend, type Operation } from "openapi-backend";
import { FORMATS } from "../../src/http/validation.ts";

type Header = { required?: boolean };
type DocumentedResponse = {
  headers?: Record<string, Header>;
  content?: Record<string, unknown>;
};

/**
 * Checks every response against the OpenAPI document the app serves, with openapi-backend's
 * validators (JSON Schema 2020-12, as OpenAPI 3.1 uses): its status must be documented for its
 * operation, its JSON body must match that status's schema, its documented headers must match
 * their schemas, and those marked required must be there. Routes the document leaves out (its
 * own page, unknown paths) are not checked.
 */
export async function responseChecker(app: FastifyInstance) {
  const definition = structuredClone(app.swagger()) as ConstructorParameters<
    typeof OpenAPIBackend
  >[0]["definition"];
  const api = new OpenAPIBackend({
    definition,
    // Skips its own check of the document, written for OpenAPI 3.0 (it refuses 3.1's type
    // arrays); openapi.test.ts checks the document against 3.1 instead.
    quick: true,
    // As Fastify routes: `/api/v1/forms/` is not `/api/v1/forms`.
    ignoreTrailingSlashes: false,
    strict: true,
    customizeAjv: (_draft07, options) => {
      const ajv = new Ajv2020({ ...options, strict: false });
      for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format.test);
      // The record's timestamps: ISO 8601 in UTC with milliseconds, as decisions.md fixes them.
      ajv.addFormat("date-time", (value) =>
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value),
      );
      return ajv;
    },
  });
  await api.init();

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

/**
 * Wraps the app's `inject` so that a response that does not conform to the document fails the
 * request, and with it the test that sent it.
 */
export function checkEveryResponse(app: FastifyInstance) {
  // Built at the first request: the document is complete only once the app is ready.
  let checker: Promise<Awaited<ReturnType<typeof responseChecker>>> | undefined;
  const inject = app.inject.bind(app) as (
    options: InjectOptions,
  ) => Promise<LightMyRequestResponse>;
  const checked = async (options: InjectOptions | string) => {
    const request = typeof options === "string" ? { url: options } : options;
    const response = await inject(request);
    checker ??= (async () => {
      await app.ready();
      return responseChecker(app);
    })();
    const problems = (await checker)(request, response);
    if (problems.length > 0) {
      throw new Error(`the response does not match the OpenAPI document:\n${problems.join("\n")}`);
    }
    return response;
  };
  app.inject = checked as unknown as FastifyInstance["inject"];
}
