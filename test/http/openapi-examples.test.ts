import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { type JobQueue, startJobQueue } from "../../src/jobs/queue.ts";
import { NOTIFICATION_QUEUES } from "../../src/notifications/queues.ts";
import { createSubmissionEvents } from "../../src/notifications/submission-events.ts";
import { insertDeliveries } from "../../src/webhooks/deliveries.repository.ts";
import { deliveryQueueOn } from "../../src/webhooks/webhook-worker.ts";
import { buildTestApp, closeTestDatabase, createTenant, testDatabase } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
interface Operation {
  operationId: string;
  security: unknown[];
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, unknown>;
}

let testApp: TestApp;
let jobs: JobQueue;
let operations: { method: string; path: string; operation: Operation }[];

before(async () => {
  // Operations that enqueue (the test event, redelivery, a submission to a form with a webhook)
  // need a queue; no worker takes from it.
  jobs = await startJobQueue({
    db: await testDatabase(),
    log: { warn() {}, error() {} },
    databaseUrl: process.env.DATABASE_URL ?? null,
    queues: NOTIFICATION_QUEUES,
  });
  const events = createSubmissionEvents(jobs, {
    smtpConfigured: false,
    mailFrom: loadConfig({}).mailFrom,
  });
  testApp = await buildTestApp({}, { events, deliveryQueue: deliveryQueueOn(jobs) });
  const doc = (await testApp.app.inject({ url: "/api/v1/openapi.json" })).json();
  operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(
    ([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
  );
});

after(async () => {
  await testApp?.close();
  await jobs?.stop();
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
    "createWebhook",
    "submitForm",
    "updateForm",
    "updateSubmission",
    "updateWebhook",
  ]);
  for (const { method, path, operation } of operations) {
    const created = await testApp.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": fullKey },
      // The hosted form page needs a hosted form (an endpoint form's page is a 404).
      payload: {
        name: "for an example",
        ...(operation.operationId === "hostedFormPage" && { type: "hosted" }),
      },
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
    // A file's routes need a file: the submission carries one, and its signed link's query.
    const withFile = path.includes("{fileId}");
    const submitted = await testApp.app.inject({
      method: "POST",
      url: `/f/${formId}`,
      ...(withFile
        ? {
            headers: { "content-type": "multipart/form-data; boundary=XB" },
            payload:
              '--XB\r\nContent-Disposition: form-data; name="notes"; filename="notes.txt"\r\n\r\n' +
              "for an example\r\n--XB--\r\n",
          }
        : { payload: { message: "for an example" } }),
    });
    const submissionId = submitted.json().id;
    let fileId = "";
    let linkQuery = "";
    if (withFile) {
      const record = await testApp.app.inject({
        url: `/api/v1/forms/${formId}/submissions/${submissionId}`,
        headers: { "api-key": fullKey },
      });
      const [file] = record.json().files;
      fileId = file.id;
      if (operation.security.length === 0) linkQuery = new URL(file.url).search;
    }
    const webhook = await testApp.app.inject({
      method: "POST",
      url: `/api/v1/forms/${formId}/webhooks`,
      headers: { "api-key": fullKey },
      payload: { url: "https://hooks.example.com/example" },
    });
    const webhookId = webhook.json().id;
    const deliveryId = `dlv_${webhookId.slice(3)}`;
    await insertDeliveries(await testDatabase(), [
      {
        id: deliveryId,
        webhookId,
        eventId: `msg_${webhookId.slice(3)}`,
        event: "webhook.test",
        body: "{}",
        createdAt: new Date(),
      },
    ]);
    const res = await testApp.app.inject({
      method: method.toUpperCase() as "GET",
      url:
        path
          .replace("{formId}", formId)
          .replace("{submissionId}", submissionId)
          .replace("{fileId}", fileId)
          .replace("{webhookId}", webhookId)
          .replace("{deliveryId}", deliveryId) + linkQuery,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    const success = Object.keys(operation.responses).filter((status) => status.startsWith("2"));
    assert.deepEqual([String(res.statusCode)], success, `${operation.operationId}: ${res.body}`);
  }
});
