import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
interface Operation {
  operationId: string;
  security: unknown[];
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, unknown>;
}

let testApp: TestApp;
let operations: { method: string; path: string; operation: Operation }[];

before(async () => {
  testApp = await buildTestApp();
  const doc = (await testApp.app.inject({ url: "/api/v1/openapi.json" })).json();
  operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(
    ([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
  );
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

/**
 * What "Try it out" does: every operation sent with its documented examples as they are (on a new
 * organization of the free plan, the path's `formId` that of a form it has) answers its documented
 * success status.
 */
test("every operation, sent with its documented examples, answers its success status", async () => {
  const { fullKey } = await createTenant("free");
  const withBody = operations.filter(({ operation }) => operation.requestBody);
  assert.deepEqual(withBody.map(({ operation }) => operation.operationId).sort(), [
    "createForm",
    "submitForm",
    "updateForm",
    "updateSubmission",
  ]);
  for (const { method, path, operation } of operations) {
    const created = await testApp.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": fullKey },
      payload: { name: "for an example" },
    });
    const headers: Record<string, string> = {};
    if (operation.security.length > 0) headers["api-key"] = fullKey;
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in === "header" && parameter.example !== undefined) {
        headers[parameter.name] = String(parameter.example);
      }
    }
    const body = operation.requestBody?.content["application/json"]?.example;
    if (operation.requestBody) assert.ok(body, `${operation.operationId} has a body example`);
    const formId = created.json().id;
    const submitted = await testApp.app.inject({
      method: "POST",
      url: `/f/${formId}`,
      payload: { message: "for an example" },
    });
    const res = await testApp.app.inject({
      method: method.toUpperCase() as "GET",
      url: path.replace("{formId}", formId).replace("{submissionId}", submitted.json().id),
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    const success = Object.keys(operation.responses).filter((status) => status.startsWith("2"));
    assert.deepEqual([String(res.statusCode)], success, `${operation.operationId}: ${res.body}`);
  }
});
