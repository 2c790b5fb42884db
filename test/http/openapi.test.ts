import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { codeToStatus, type ErrorCode } from "../../src/http/errors.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
interface Response {
  description: string;
  headers?: Record<string, { required?: boolean }>;
  content?: Record<
    string,
    {
      example?: { error?: { code: string } };
      examples?: Record<string, { value?: { error?: { code: string } } }>;
    }
  >;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  responses: Record<string, Response>;
  security?: unknown;
}
type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

/** Every route with the statuses it can answer, as error-handling.ts and the routes give them. */
const ANY = ["400", "408", "417", "431", "500"];
const KEYED = [...ANY, "401", "429", "503"];
const FULL = [...KEYED, "403"];
const BODY = ["413", "415", "422"];
const EXPECTED: Record<string, { statuses: string[]; keyed: boolean }> = {
  "GET /": { statuses: ["200", ...ANY], keyed: false },
  "GET /api/v1": { statuses: ["200", ...ANY], keyed: false },
  "GET /api/v1/forms": { statuses: ["200", "422", ...KEYED], keyed: true },
  "POST /api/v1/forms": { statuses: ["201", ...BODY, ...FULL], keyed: true },
  "GET /api/v1/forms/{formId}": { statuses: ["200", "404", "422", ...KEYED], keyed: true },
  "PATCH /api/v1/forms/{formId}": { statuses: ["200", "404", ...BODY, ...FULL], keyed: true },
  "DELETE /api/v1/forms/{formId}": { statuses: ["204", "404", ...BODY, ...FULL], keyed: true },
  "GET /healthz": { statuses: ["200", ...ANY], keyed: false },
  "GET /readyz": { statuses: ["200", "503", ...ANY], keyed: false },
  "GET /api/v1/forms/{formId}/submissions": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/submissions/export": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/submissions/{submissionId}": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/submissions/{submissionId}/emails": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "PATCH /api/v1/forms/{formId}/submissions/{submissionId}": {
    statuses: ["200", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "DELETE /api/v1/forms/{formId}/submissions/{submissionId}": {
    statuses: ["204", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/webhooks": { statuses: ["200", "404", "422", ...KEYED], keyed: true },
  "POST /api/v1/forms/{formId}/webhooks": {
    statuses: ["201", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/webhooks/{webhookId}": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "PATCH /api/v1/forms/{formId}/webhooks/{webhookId}": {
    statuses: ["200", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "DELETE /api/v1/forms/{formId}/webhooks/{webhookId}": {
    statuses: ["204", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "POST /api/v1/forms/{formId}/webhooks/{webhookId}/rotate-secret": {
    statuses: ["200", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "POST /api/v1/forms/{formId}/webhooks/{webhookId}/test": {
    statuses: ["202", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/webhooks/{webhookId}/deliveries": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "POST /api/v1/forms/{formId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": {
    statuses: ["202", "404", ...BODY, ...FULL],
    keyed: true,
  },
  "GET /api/v1/forms/{formId}/submissions/{submissionId}/files/{fileId}": {
    statuses: ["200", "404", "422", ...KEYED],
    keyed: true,
  },
  "GET /files/{fileId}": { statuses: ["200", "403", "404", "422", "503", ...ANY], keyed: false },
  "POST /f/{formId}": {
    statuses: ["201", "303", "403", "404", "429", "503", ...BODY, ...ANY],
    keyed: false,
  },
  "OPTIONS /f/{formId}": { statuses: ["204", "503", ...ANY], keyed: false },
  "GET /f/{formId}/thanks": { statuses: ["200", "404", "503", ...ANY], keyed: false },
  "GET /f/{formId}": { statuses: ["200", "404", "503", ...ANY], keyed: false },
  "GET /assets/form.js": { statuses: ["200", ...ANY], keyed: false },
  "GET /assets/answer-rules.js": { statuses: ["200", ...ANY], keyed: false },
  "GET /assets/icon.svg": { statuses: ["200", ...ANY], keyed: false },
};

/** Routes that are deliberately not documented: the document itself and its viewer. */
const UNDOCUMENTED = (path: string) => path === "/api/v1/openapi.json" || path.startsWith("/docs");

let testApp: TestApp;
let doc: OpenApiDocument;

before(async () => {
  testApp = await buildTestApp();
  const res = await testApp.app.inject({ url: "/api/v1/openapi.json" });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  doc = res.json();
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      route: `${method.toUpperCase()} ${path}`,
      operation,
    })),
  );

/**
 * The app's own routes, read from `printRoutes`' tree (`├── /api/v1/forms (GET, HEAD, POST)`),
 * as `METHOD /path` with `:param` written `{param}`. HEAD is Fastify's automatic twin of GET.
 */
function appRoutes(): string[] {
  const tree = testApp.app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split("\n")) {
    const match = /^([│ ├└─]*)(\S.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? "").length / 4 - 1;
    stack.length = depth;
    stack.push(match[2] ?? "");
    const path = stack.join("").replace(/:(\w+)/g, "{$1}");
    for (const method of (match[3] ?? "").split(", ")) {
      if (method !== "HEAD") routes.push(`${method} ${path}`);
    }
  }
  return routes;
}

test("the document is OpenAPI 3.1.0 and valid", async () => {
  assert.equal(doc.openapi, "3.1.0");
  const result = await new Validator().validate(
    structuredClone(doc) as unknown as Record<string, unknown>,
  );
  assert.deepEqual(result, { valid: true });
});

test("the document is formdeck's, at the package's version", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  assert.equal(doc.info.title, "formdeck API");
  assert.equal(doc.info.version, pkg.version);
});

test("the route list is read from the app itself", () => {
  const routes = appRoutes();
  for (const route of ["GET /api/v1/forms", "GET /healthz", "GET /docs", "POST /api/v1/forms"]) {
    assert.ok(routes.includes(route), `${route} in ${routes.join(", ")}`);
  }
});

test("every route of the app is documented, and nothing else", () => {
  const documented = appRoutes().filter((route) => !UNDOCUMENTED(route.split(" ")[1] ?? ""));
  assert.deepEqual(documented.sort(), Object.keys(EXPECTED).sort());
  assert.deepEqual(
    operations()
      .map((o) => o.route)
      .sort(),
    documented.sort(),
  );
});

test("every operation: a unique operationId, a summary, a description, defined tags", () => {
  const tags = new Set(doc.tags.map((tag) => tag.name));
  for (const tag of doc.tags) assert.ok(tag.description, `tag ${tag.name} has a description`);
  const ids = new Set<string>();
  for (const { route, operation } of operations()) {
    assert.match(operation.operationId ?? "", /^[a-z][A-Za-z]+$/, route);
    assert.ok(!ids.has(operation.operationId ?? ""), `${route}: operationId is unique`);
    ids.add(operation.operationId ?? "");
    assert.ok(operation.summary, `${route} has a summary`);
    assert.ok(operation.description, `${route} has a description`);
    assert.ok(operation.tags?.length, `${route} has a tag`);
    for (const tag of operation.tags ?? []) assert.ok(tags.has(tag), `${route}: tag ${tag}`);
  }
});

test("every operation declares its statuses, and its security: the key, or none", () => {
  assert.deepEqual(doc.components.securitySchemes, {
    apiKey: { type: "apiKey", in: "header", name: "api-key" },
  });
  for (const [route, expected] of Object.entries(EXPECTED)) {
    const [method = "", path = ""] = route.split(" ");
    const operation = doc.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${route} is documented`);
    assert.deepEqual(Object.keys(operation.responses).sort(), [...expected.statuses].sort(), route);
    assert.deepEqual(operation.security, expected.keyed ? [{ apiKey: [] }] : [], route);
  }
});

test("every error response: the error body, examples whose codes are that status's", () => {
  for (const { route, operation } of operations()) {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (Number(status) < 400) continue;
      assert.ok(response.description, `${route} ${status} has a description`);
      const media = response.content?.["application/json"];
      const examples = media?.example
        ? [media.example]
        : Object.values(media?.examples ?? {}).map((named) => named.value);
      assert.ok(examples.length > 0, `${route} ${status} has an example`);
      for (const example of examples) {
        const code = example?.error?.code as ErrorCode;
        assert.equal(String(codeToStatus[code]), status, `${route} ${status}: ${code}`);
      }
    }
  }
});

test("every answer documents X-Request-Id; keyed answers after the key check the rate limit", () => {
  const post = doc.paths["/api/v1/forms"]?.post?.responses ?? {};
  const required = (status: string) =>
    Object.entries(post[status]?.headers ?? {})
      .filter(([, header]) => header.required)
      .map(([name]) => name)
      .sort();
  const rateLimit = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];
  assert.deepEqual(required("201"), ["Location", ...rateLimit, "X-Request-Id"].sort());
  assert.ok(post["201"]?.headers?.["Idempotent-Replayed"], "Idempotent-Replayed documented");
  assert.deepEqual(required("401"), ["X-Request-Id"]);
  assert.deepEqual(required("422"), [...rateLimit, "X-Request-Id"].sort());
  assert.deepEqual(required("429"), ["Retry-After", ...rateLimit, "X-Request-Id"].sort());
  assert.deepEqual(required("503"), ["Retry-After", "X-Request-Id"]);
  // Answered by Node's HTTP parser, before any request id exists.
  assert.deepEqual(required("431"), []);
  const health = doc.paths["/healthz"]?.get?.responses["200"]?.headers ?? {};
  assert.deepEqual(Object.keys(health), ["X-Request-Id"]);
});

test("GET /docs answers formdeck's page: its title, its icon, no framework logo", async () => {
  let res = await testApp.app.inject({ url: "/docs" });
  for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 5; hops++) {
    const location = new URL(String(res.headers.location), "http://localhost/docs");
    res = await testApp.app.inject({ url: location.pathname + location.search });
  }
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers["content-type"]), /^text\/html/);
  assert.match(res.body, /<title>formdeck API<\/title>/);
  assert.match(res.body, /rel="icon" type="image\/svg\+xml" href="[^"]*\/theme\/favicon\.svg"/);
  assert.doesNotMatch(res.body, /favicon-32x32\.png/);
  const initializer = await testApp.app.inject({ url: "/docs/static/swagger-initializer.js" });
  assert.equal(initializer.statusCode, 200);
  // The layout without the top bar, where the framework's logo would be.
  assert.match(initializer.body, /"layout":\s*"BaseLayout"/);
  const icon = await testApp.app.inject({ url: "/docs/static/theme/favicon.svg" });
  assert.equal(icon.statusCode, 200);
  assert.match(icon.body, /^<svg /);
});
