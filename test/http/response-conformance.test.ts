import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { Type } from "typebox";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { apiOperation, success } from "../../src/http/api-responses.ts";
import { createMemoryRateLimiter } from "../../src/rate-limit/memory-rate-limiter.ts";
import { buildTestApp, closeTestDatabase, testDatabase } from "../helpers.ts";
import { checkEveryResponse, responseChecker } from "./response-conformance.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let testApp: TestApp;
let check: Awaited<ReturnType<typeof responseChecker>>;

before(async () => {
  testApp = await buildTestApp();
  check = await responseChecker(testApp.app.swagger());
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

const JSON_TYPE = "application/json; charset=utf-8";

/** A response as `inject` gives one, made up, to see what the checker says of it. */
function made(statusCode: number, headers: Record<string, string>, body: unknown) {
  const text = body === undefined ? "" : JSON.stringify(body);
  const contentType = body === undefined ? {} : { "content-type": JSON_TYPE };
  return {
    statusCode,
    headers: { ...contentType, ...headers },
    body: text,
    json: () => JSON.parse(text),
  } as unknown as LightMyRequestResponse;
}

const rateLimit = { "x-ratelimit-limit": "600", "x-ratelimit-remaining": "599" };
const formId = "/api/v1/forms/fm_x";

test("a response as documented passes", () => {
  assert.deepEqual(
    check({ url: "/healthz" }, made(200, { "x-request-id": "r" }, { status: "ok" })),
    [],
  );
  const notFound = { error: { code: "not_found", message: "form: not found" } };
  const headers = { "x-request-id": "r", ...rateLimit, "x-ratelimit-reset": "1" };
  assert.deepEqual(check({ url: formId }, made(404, headers, notFound)), []);
});

test("what the document does not describe is not checked: other paths, HEAD", () => {
  const missing = made(
    404,
    { "x-request-id": "r" },
    { error: { code: "not_found", message: "x" } },
  );
  for (const url of ["/nowhere", "//healthz", "/api/v1/forms/", "/docs"]) {
    assert.deepEqual(check({ url }, missing), [], url);
  }
  assert.deepEqual(check({ method: "HEAD", url: "/healthz" }, made(200, {}, undefined)), []);
});

test("the path checked is the one the server routed: inject reads /api/v1/forms/.. as /api/v1/", async () => {
  const res = await testApp.app.inject({ url: "/api/v1/forms/.." });
  assert.deepEqual(res.json(), {
    error: { code: "not_found", message: "route: GET /api/v1/ does not exist" },
  });
});

test("each way a response can differ from the document is reported", () => {
  const cases: [string, LightMyRequestResponse, RegExp][] = [
    ["/healthz", made(404, { "x-request-id": "r" }, {}), /status 404 is not documented/],
    ["/healthz", made(200, {}, { status: "ok" }), /header X-Request-Id is documented as always/],
    ["/healthz", made(200, { "x-request-id": "r" }, { status: "fine" }), /body\/status must be/],
    [
      formId,
      made(
        404,
        { "x-request-id": "r", ...rateLimit, "x-ratelimit-reset": "soon" },
        {
          error: { code: "bad_request", message: "form: not found" },
        },
      ),
      /header \/headers\/x-ratelimit-reset must match pattern[\s\S]*body\/error\/code must be equal/,
    ],
    [
      "/",
      {
        ...made(200, { "x-request-id": "r" }, {}),
        headers: { "x-request-id": "r", "content-type": "text/plain" },
      } as LightMyRequestResponse,
      /Content-Type text\/plain is not documented/,
    ],
  ];
  for (const [url, response, expected] of cases) {
    assert.match(check({ url }, response).join("\n"), expected, url);
  }
});

test("a 204 with a body, or a 201 without its Location, is reported", () => {
  const headers = { "x-request-id": "r", ...rateLimit, "x-ratelimit-reset": "1" };
  const deleted = check({ method: "DELETE", url: formId }, made(204, headers, { id: "x" }));
  assert.match(deleted.join("\n"), /a body where none is documented/);
  const created = check({ method: "POST", url: "/api/v1/forms" }, made(201, headers, {}));
  assert.match(created.join("\n"), /header Location is documented as always sent/);
});

test("a checked app's inject fails a request whose response the document does not describe", async () => {
  const limiter = createMemoryRateLimiter({ windowSeconds: 60 });
  const app = await buildApp({ config: loadConfig({}), db: await testDatabase(), limiter });
  const probe = apiOperation({
    operationId: "probe",
    summary: "A route that answers what its schema does not say",
    description: "Only in this test.",
    tags: ["health"],
    access: "public",
  });
  app.get(
    "/probe",
    { schema: { ...probe.schema, response: probe.responses({ 200: success(Type.Null(), "ok") }) } },
    async (_request, reply) => reply.code(202).send(),
  );
  try {
    await checkEveryResponse(app);
    await assert.rejects(
      app.inject({ url: "/probe" }),
      /probe \(GET \/probe\): status 202 is not documented/,
    );
  } finally {
    await app.close();
    await limiter.close();
  }
});
