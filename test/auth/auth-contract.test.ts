import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { createApiKey, revokeKey } from "../../src/admin/admin.service.ts";
import { type JobQueue, startJobQueue } from "../../src/jobs/queue.ts";
import { NOTIFICATION_QUEUES } from "../../src/notifications/queues.ts";
import { insertDeliveries } from "../../src/webhooks/deliveries.repository.ts";
import { deliveryQueueOn } from "../../src/webhooks/webhook-worker.ts";
import { buildTestApp, closeTestDatabase, createTenant, testDatabase } from "../helpers.ts";
import { seedSubmissions } from "../submissions/submission-fixtures.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
type Tenant = Awaited<ReturnType<typeof createTenant>>;
type Method = "GET" | "POST" | "PATCH" | "DELETE";

const FORMS = "/api/v1/forms";
/** Well-formed, but no form has it. */
const MISSING_ID = "form_AAAAAAAAAAAAAAAAAAAAAA";

const missingHeader = {
  error: { code: "unauthorized", message: "api-key: the header is required" },
};
const invalidKey = { error: { code: "unauthorized", message: "api-key: is not a valid key" } };
const needsFull = {
  error: {
    code: "forbidden",
    message: "api-key: this key has scope read; this operation needs scope full",
  },
};
const notFound = { error: { code: "not_found", message: "form: not found" } };
/** Well-formed, but no submission has it. */
const MISSING_SUBMISSION = "sub_AAAAAAAAAAAAAAAAAAAAAA";
/** The one submission each form made here holds. */
const submissionOf = new Map<string, string>();
/** The one webhook each form made here has, and the one delivery that webhook has. */
const webhookOf = new Map<string, string>();
const deliveryOf = new Map<string, string>();

let testApp: TestApp;
let jobs: JobQueue;
let tenant: Tenant;
let other: Tenant;

async function call(
  method: Method,
  url: string,
  key?: string,
  payload?: object,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = key === undefined ? {} : { "api-key": key };
  return testApp.app.inject({
    method,
    url,
    headers,
    ...(payload === undefined ? {} : { payload }),
  });
}

/** A new form holding one submission, so that submission routes have one to act on. */
async function newForm(key: string, name = "contract form") {
  const res = await call("POST", FORMS, key, { name });
  assert.equal(res.statusCode, 201, res.body);
  const form = res.json();
  const [submission] = await seedSubmissions(await testDatabase(), form, [{}]);
  submissionOf.set(form.id, submission?.id as string);
  const webhook = await call("POST", `${FORMS}/${form.id}/webhooks`, key, {
    url: "https://hooks.example.com/contract",
  });
  assert.equal(webhook.statusCode, 201, webhook.body);
  const deliveryId = `dlv_${form.id.slice(5)}`;
  await insertDeliveries(await testDatabase(), [
    {
      id: deliveryId,
      webhookId: webhook.json().id,
      eventId: `msg_${form.id.slice(5)}`,
      event: "webhook.test",
      body: "{}",
      createdAt: new Date(),
    },
  ]);
  webhookOf.set(form.id, webhook.json().id);
  deliveryOf.set(form.id, deliveryId);
  // The form as it now reads: with its webhook enabled.
  return (await call("GET", `${FORMS}/${form.id}`, key)).json();
}

const webhookUrl = (formId: string) =>
  `${FORMS}/${formId}/webhooks/${webhookOf.get(formId) ?? ":webhookId"}`;
const deliveryUrl = (formId: string) =>
  `${webhookUrl(formId)}/deliveries/${deliveryOf.get(formId) ?? ":deliveryId"}`;

const submissionUrl = (formId: string) =>
  `${FORMS}/${formId}/submissions/${submissionOf.get(formId) ?? MISSING_SUBMISSION}`;

/** What the store holds of a form's submissions and webhooks: a refused request leaves it as it was. */
async function storedData(formId: string) {
  const db = await testDatabase();
  return {
    submissions: await db.query(
      `SELECT id, is_spam, spam_reason, updated_at FROM submissions WHERE form_id = $1 ORDER BY id`,
      [formId],
    ),
    webhooks: await db.query(
      `SELECT w.*, d.status, d.attempts, d.next_attempt_at FROM webhooks w
         LEFT JOIN webhook_deliveries d ON d.webhook_id = w.id
        WHERE w.form_id = $1 ORDER BY w.id, d.id`,
      [formId],
    ),
  };
}

/** Every keyed route: `url` is given a form of the tenant's own, so a 404 can never hide a 401/403. */
const ROUTES: {
  method: Method;
  url: (formId: string) => string;
  scope: "read" | "full";
  body?: object;
  success: number;
}[] = [
  { method: "GET", url: () => FORMS, scope: "read", success: 200 },
  { method: "POST", url: () => FORMS, scope: "full", body: { name: "created" }, success: 201 },
  { method: "GET", url: (id) => `${FORMS}/${id}`, scope: "read", success: 200 },
  {
    method: "PATCH",
    url: (id) => `${FORMS}/${id}`,
    scope: "full",
    body: { name: "renamed" },
    success: 200,
  },
  { method: "DELETE", url: (id) => `${FORMS}/${id}`, scope: "full", success: 204 },
  { method: "GET", url: (id) => `${FORMS}/${id}/submissions`, scope: "read", success: 200 },
  { method: "GET", url: (id) => `${FORMS}/${id}/submissions/export`, scope: "read", success: 200 },
  { method: "GET", url: submissionUrl, scope: "read", success: 200 },
  { method: "PATCH", url: submissionUrl, scope: "full", body: { isSpam: true }, success: 200 },
  { method: "DELETE", url: submissionUrl, scope: "full", success: 204 },
  { method: "GET", url: (id) => `${submissionUrl(id)}/emails`, scope: "read", success: 200 },
  { method: "GET", url: (id) => `${FORMS}/${id}/webhooks`, scope: "read", success: 200 },
  {
    method: "POST",
    url: (id) => `${FORMS}/${id}/webhooks`,
    scope: "full",
    body: { url: "https://hooks.example.com/created" },
    success: 201,
  },
  { method: "GET", url: webhookUrl, scope: "read", success: 200 },
  { method: "PATCH", url: webhookUrl, scope: "full", body: { enabled: false }, success: 200 },
  { method: "DELETE", url: webhookUrl, scope: "full", success: 204 },
  {
    method: "POST",
    url: (id) => `${webhookUrl(id)}/rotate-secret`,
    scope: "full",
    success: 200,
  },
  { method: "POST", url: (id) => `${webhookUrl(id)}/test`, scope: "full", success: 202 },
  {
    method: "GET",
    url: (id) => `${webhookUrl(id)}/deliveries`,
    scope: "read",
    success: 200,
  },
  { method: "POST", url: (id) => `${deliveryUrl(id)}/redeliver`, scope: "full", success: 202 },
];

before(async () => {
  // A queue that no worker takes from: the test event and redelivery only need to enqueue.
  jobs = await startJobQueue({
    db: await testDatabase(),
    log: { warn() {}, error() {} },
    databaseUrl: process.env.DATABASE_URL ?? null,
    queues: NOTIFICATION_QUEUES,
  });
  testApp = await buildTestApp({}, { deliveryQueue: deliveryQueueOn(jobs) });
  tenant = await createTenant();
  other = await createTenant();
});

after(async () => {
  await testApp?.close();
  await jobs?.stop();
  await closeTestDatabase();
});

for (const route of ROUTES) {
  const label = `${route.method} ${route.url(":formId")}`;

  describe(`auth contract: ${label}`, () => {
    test("no api-key header, an empty one, or an unknown key → 401 and nothing changes", async () => {
      const form = await newForm(tenant.fullKey);
      const url = route.url(form.id);
      const listed = (await call("GET", FORMS, tenant.readKey)).json();
      const submissions = await storedData(form.id);
      const cases: [string | undefined, object][] = [
        [undefined, missingHeader],
        ["", missingHeader],
        ["fdk_thisKeyWasNeverIssuedByFormdeckAtAll0000000", invalidKey],
        [`${tenant.fullKey}x`, invalidKey],
      ];
      for (const [key, body] of cases) {
        const res = await call(route.method, url, key, route.body);
        assert.equal(res.statusCode, 401, `key ${JSON.stringify(key)}`);
        assert.deepEqual(res.json(), body);
        assert.equal(res.headers["x-ratelimit-limit"], undefined);
      }
      assert.deepEqual((await call("GET", `${FORMS}/${form.id}`, tenant.readKey)).json(), form);
      assert.deepEqual((await call("GET", FORMS, tenant.readKey)).json(), listed);
      assert.deepEqual(await storedData(form.id), submissions);
    });

    test("a revoked key → 401 from the next request on", async () => {
      const db = await testDatabase();
      const issued = await createApiKey(db, {
        organizationId: tenant.org.id,
        scope: "full",
        name: "soon revoked",
      });
      const form = await newForm(issued.key);
      const ok = await call(route.method, route.url(form.id), issued.key, route.body);
      assert.equal(ok.statusCode, route.success, ok.body);
      const target = await newForm(tenant.fullKey);
      await revokeKey(db, issued.id);
      const res = await call(route.method, route.url(target.id), issued.key, route.body);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), invalidKey);
      const unchanged = await call("GET", `${FORMS}/${target.id}`, tenant.readKey);
      assert.deepEqual(unchanged.json(), target);
    });

    if (route.scope === "full") {
      test("a read key → 403 and nothing changes", async () => {
        const form = await newForm(tenant.fullKey);
        const listed = (await call("GET", FORMS, tenant.readKey)).json();
        const submissions = await storedData(form.id);
        const res = await call(route.method, route.url(form.id), tenant.readKey, route.body);
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), needsFull);
        assert.deepEqual((await call("GET", FORMS, tenant.readKey)).json(), listed);
        assert.deepEqual(await storedData(form.id), submissions);
      });
    } else {
      test("a read key is allowed", async () => {
        const form = await newForm(tenant.fullKey);
        const res = await call(route.method, route.url(form.id), tenant.readKey);
        assert.equal(res.statusCode, 200, res.body);
      });
    }

    test("a full key is allowed", async () => {
      const form = await newForm(tenant.fullKey);
      const res = await call(route.method, route.url(form.id), tenant.fullKey, route.body);
      assert.equal(res.statusCode, route.success, res.body);
    });

    if (route.url("x") !== FORMS) {
      test("another organization's form → the same 404 as a missing one; it is unchanged", async () => {
        const theirs = await newForm(other.fullKey, "not yours");
        const theirSubmissions = await storedData(theirs.id);
        const missing = await call(route.method, route.url(MISSING_ID), tenant.fullKey, route.body);
        assert.equal(missing.statusCode, 404);
        assert.deepEqual(missing.json(), notFound);
        const res = await call(route.method, route.url(theirs.id), tenant.fullKey, route.body);
        assert.equal(res.statusCode, 404);
        assert.deepEqual(res.json(), missing.json());
        const own = await call("GET", `${FORMS}/${theirs.id}`, other.readKey);
        assert.equal(own.statusCode, 200);
        assert.deepEqual(own.json(), theirs);
        assert.deepEqual(await storedData(theirs.id), theirSubmissions);
      });
    }
  });
}

describe("organizations are isolated in list and search", () => {
  test("another organization's forms never appear", async () => {
    const mine = await createTenant();
    const theirs = await createTenant();
    const marker = `isolated-${Date.now()}`;
    await newForm(theirs.fullKey, `${marker} theirs`);
    const own = await newForm(mine.fullKey, `${marker} mine`);
    for (const query of ["", `?search=${marker}`, "?type=endpoint", "?sort=submissions"]) {
      const res = await call("GET", `${FORMS}${query}`, mine.readKey);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(
        body.data.map((f: { id: string }) => f.id),
        [own.id],
        query,
      );
      assert.deepEqual(body.meta, { total: 1 });
    }
  });
});

describe("order of checks: 401 → 403 → 422 → 404 → paid plan 403", () => {
  const invalidBody = { name: 5 };
  const nameNotString = {
    error: { code: "unprocessable_entity", message: "name: must be a string" },
  };

  test("no key with an invalid body on a missing form → 401", async () => {
    for (const method of ["POST", "PATCH"] as const) {
      const url = method === "POST" ? FORMS : `${FORMS}/${MISSING_ID}`;
      const res = await call(method, url, undefined, invalidBody);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), missingHeader);
    }
    const list = await call("GET", `${FORMS}?page=0`, "fdk_unknown");
    assert.deepEqual([list.statusCode, list.json()], [401, invalidKey]);
  });

  test("a read key with an invalid body, even on a missing form → 403", async () => {
    for (const method of ["POST", "PATCH"] as const) {
      const url = method === "POST" ? FORMS : `${FORMS}/${MISSING_ID}`;
      const res = await call(method, url, tenant.readKey, invalidBody);
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), needsFull);
    }
  });

  test("a full key with an invalid body on a missing or foreign form → 422", async () => {
    const theirs = await newForm(other.fullKey);
    for (const id of [MISSING_ID, theirs.id, "not-a-form-id"]) {
      const res = await call("PATCH", `${FORMS}/${id}`, tenant.fullKey, invalidBody);
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json(), nameNotString);
    }
    const res = await call("GET", `${FORMS}?page=0`, tenant.readKey);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), {
      error: {
        code: "unprocessable_entity",
        message: "page: must be a whole number greater than 0",
      },
    });
  });

  test("a paid setting on a missing form of a free organization → 404, not 403", async () => {
    const res = await call("PATCH", `${FORMS}/${MISSING_ID}`, tenant.fullKey, {
      useCustomRedirect: true,
    });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), notFound);
  });
});
