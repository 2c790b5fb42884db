import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
interface Operation {
  responses: Record<string, unknown>;
  security?: unknown;
}
type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

/** Every route with the statuses its schema declares; 500 is declared wherever errors are. */
const KEYED = ["401", "403", "429", "500", "503"];
const EXPECTED: Record<string, { statuses: string[]; keyed: boolean }> = {
  "GET /api/v1/forms": { statuses: ["200", "422", ...KEYED], keyed: true },
  "POST /api/v1/forms": { statuses: ["201", "413", "415", "422", ...KEYED], keyed: true },
  "GET /api/v1/forms/{formId}": { statuses: ["200", "404", "422", ...KEYED], keyed: true },
  "PATCH /api/v1/forms/{formId}": {
    statuses: ["200", "404", "413", "415", "422", ...KEYED],
    keyed: true,
  },
  "DELETE /api/v1/forms/{formId}": { statuses: ["204", "404", "422", ...KEYED], keyed: true },
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
  "PATCH /api/v1/forms/{formId}/submissions/{submissionId}": {
    statuses: ["200", "404", "413", "415", "422", ...KEYED],
    keyed: true,
  },
  "DELETE /api/v1/forms/{formId}/submissions/{submissionId}": {
    statuses: ["204", "404", "422", ...KEYED],
    keyed: true,
  },
  "GET /healthz": { statuses: ["200"], keyed: false },
  "POST /f/{formId}": {
    statuses: ["201", "303", "403", "404", "413", "415", "422", "429", "500", "503"],
    keyed: false,
  },
  "OPTIONS /f/{formId}": { statuses: ["204", "500", "503"], keyed: false },
  "GET /f/{formId}/thanks": { statuses: ["200", "404", "500", "503"], keyed: false },
  "GET /readyz": { statuses: ["200", "500", "503"], keyed: false },
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

test("the route list is read from the app itself", () => {
  const routes = appRoutes();
  for (const route of ["GET /api/v1/forms", "GET /healthz", "GET /docs", "POST /api/v1/forms"]) {
    assert.ok(routes.includes(route), `${route} in ${routes.join(", ")}`);
  }
});

test("every route of the app is documented, and nothing else", () => {
  const documented = appRoutes().filter((route) => !UNDOCUMENTED(route.split(" ")[1] ?? ""));
  assert.deepEqual(documented.sort(), Object.keys(EXPECTED).sort());
  const inDocument = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
  assert.deepEqual(inDocument.sort(), documented.sort());
});

test("every operation declares its responses, and keyed ones the api-key scheme", () => {
  assert.deepEqual(doc.components.securitySchemes, {
    apiKey: { type: "apiKey", in: "header", name: "api-key" },
  });
  for (const [route, expected] of Object.entries(EXPECTED)) {
    const [method = "", path = ""] = route.split(" ");
    const operation = doc.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${route} is documented`);
    assert.deepEqual(Object.keys(operation.responses).sort(), [...expected.statuses].sort(), route);
    assert.deepEqual(operation.security, expected.keyed ? [{ apiKey: [] }] : undefined, route);
  }
});

test("error responses are documented with the error body", () => {
  const response = doc.paths["/api/v1/forms"]?.post?.responses["422"] as {
    content: Record<string, { schema: { properties: Record<string, unknown> } }>;
  };
  const schema = response.content["application/json"]?.schema;
  assert.deepEqual(Object.keys(schema?.properties ?? {}), ["error"]);
});

test("GET /docs answers an HTML page", async () => {
  let res = await testApp.app.inject({ url: "/docs" });
  for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 5; hops++) {
    const location = new URL(String(res.headers.location), "http://localhost/docs");
    res = await testApp.app.inject({ url: location.pathname + location.search });
  }
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers["content-type"]), /^text\/html/);
  assert.match(res.body, /<html/i);
});
