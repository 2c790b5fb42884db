import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type App,
  assertNoSecret,
  type Body,
  DEFAULTS,
  expectedForm,
  unprocessable,
} from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createKey, createTenant } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

interface Answer {
  status: number;
  body: Body;
  text: string;
  headers: Record<string, unknown>;
}

let testApp: TestApp;
let app: App;
let db: TestApp["db"];

before(async () => {
  testApp = await buildTestApp();
  app = testApp.app;
  db = testApp.db;
});

after(async () => {
  await testApp.close();
  await closeTestDatabase();
});

/** A key string no other test uses. */
let counter = 0;
const newKey = () => `key-${process.pid}-${Date.now()}-${++counter}`;

/** `POST /forms` as `apiKey`; `idempotencyKey` may be a string, several, or absent. */
async function create(
  apiKey: string,
  body: unknown,
  idempotencyKey?: string | string[],
  target: App = app,
): Promise<Answer> {
  const res = await target.inject({
    method: "POST",
    url: "/api/v1/forms",
    headers: {
      "api-key": apiKey,
      "content-type": "application/json",
      ...(idempotencyKey !== undefined && { "Idempotency-Key": idempotencyKey }),
    },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.json(), text: res.body, headers: res.headers };
}

/** The organization's forms, counted in the store itself. */
async function formCount(organizationId: string): Promise<number> {
  const rows = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM forms WHERE organization_id = $1",
    [organizationId],
  );
  return rows[0]?.n ?? 0;
}

interface KeyRowView {
  requestHash: string;
  status: number | null;
  location: string | null;
  body: string | null;
}

async function storedKeys(organizationId: string): Promise<(KeyRowView & { key: string })[]> {
  return db.query(
    `SELECT key, request_hash AS "requestHash", response_status AS status,
            response_location AS location, response_body AS body
       FROM idempotency_keys WHERE organization_id = $1 ORDER BY key`,
    [organizationId],
  );
}

/** Moves a key's creation `hours` into the past, as if that much time had gone by. */
async function ageKey(organizationId: string, key: string, hours: number) {
  await db.query(
    `UPDATE idempotency_keys SET created_at = created_at - $3 * interval '1 minute'
      WHERE organization_id = $1 AND key = $2`,
    [organizationId, key, Math.round(hours * 60)],
  );
}

/** What a client compares between two answers: all but the per-request headers. */
const asSeen = (answer: Answer) => ({
  status: answer.status,
  text: answer.text,
  location: answer.headers.location,
  contentType: answer.headers["content-type"],
});

function assertCreated(answer: Answer, body: Body, organizationId: string) {
  assert.equal(answer.status, 201, answer.text);
  assert.deepEqual(answer.body, expectedForm(answer.body, body, organizationId));
  assert.equal(answer.headers.location, `/api/v1/forms/${answer.body.id}`);
}

describe("a repeated key", () => {
  test("gives one form and the same answer, marked as replayed", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const body = { name: "Once", emailsToNotify: ["a@example.com"] };
    const first = await create(fullKey, body, key);
    assertCreated(first, body, org.id);
    assert.equal(first.headers["idempotent-replayed"], undefined);

    const second = await create(fullKey, body, key);
    assert.deepEqual(asSeen(second), asSeen(first));
    assert.deepEqual(second.body, first.body);
    assert.equal(second.headers["idempotent-replayed"], "true");
    assert.equal(await formCount(org.id), 1);

    // The store holds exactly what was sent the first time.
    const [row] = await storedKeys(org.id);
    assert.deepEqual(
      { ...row, requestHash: undefined },
      {
        key,
        requestHash: undefined,
        status: 201,
        location: first.headers.location,
        body: first.text,
      },
    );
    assert.match(row?.requestHash ?? "", /^[0-9a-f]{64}$/);

    // The form is really there, as the answer says.
    const read = await app.inject({
      url: `/api/v1/forms/${first.body.id}`,
      headers: { "api-key": fullKey },
    });
    assert.deepEqual(read.json(), first.body);
  });

  test("the same JSON value in another spelling is the same request", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const first = await create(fullKey, '{"name":"Spelling","maxResponses":10}', key);
    assertCreated(first, { name: "Spelling", maxResponses: 10 }, org.id);
    const respelled = await create(
      fullKey,
      '{ "maxResponses" : 10.0,\n  "name": "Spelling" }',
      key,
    );
    assert.deepEqual(asSeen(respelled), asSeen(first));
    assert.equal(respelled.headers["idempotent-replayed"], "true");
    assert.equal(await formCount(org.id), 1);
  });

  test("20 concurrent requests give one form and 20 identical answers", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const body = { name: "Raced", type: "hosted" };
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(fullKey, body, key)));
    const [first] = answers as [Answer];
    assertCreated(first, body, org.id);
    for (const answer of answers) assert.deepEqual(asSeen(answer), asSeen(first));
    const replayed = answers.filter((a) => a.headers["idempotent-replayed"] === "true");
    assert.equal(replayed.length, 19);
    assert.equal(await formCount(org.id), 1);
    assert.equal((await storedKeys(org.id)).length, 1);
  });

  test("with a different body is a 422 naming the header, and writes nothing", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const first = await create(fullKey, { name: "Original" }, key);
    assertCreated(first, { name: "Original" }, org.id);
    const rowBefore = await storedKeys(org.id);

    for (const other of [{ name: "Changed" }, { name: "Original", type: "hosted" }]) {
      const res = await create(fullKey, other, key);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 422,
          body: unprocessable("Idempotency-Key: was already used with a different request body"),
        },
      );
      assert.equal(res.headers["idempotent-replayed"], undefined);
      assert.equal(res.headers.location, undefined);
    }
    assert.equal(await formCount(org.id), 1);
    assert.deepEqual(await storedKeys(org.id), rowBefore);
    // The original request still replays.
    assert.deepEqual(asSeen(await create(fullKey, { name: "Original" }, key)), asSeen(first));
  });
});

describe("keys", () => {
  test("belong to one organization: another one gets its own form", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const key = newKey();
    const body = { name: "Shared key string" };
    const fromA = await create(a.fullKey, body, key);
    const fromB = await create(b.fullKey, body, key);
    assertCreated(fromA, body, a.org.id);
    assertCreated(fromB, body, b.org.id);
    assert.notEqual(fromA.body.id, fromB.body.id);
    assert.equal(fromB.headers["idempotent-replayed"], undefined);
    assert.equal(await formCount(a.org.id), 1);
    assert.equal(await formCount(b.org.id), 1);
  });

  test("are shared by the organization's keys", async () => {
    const { org, fullKey } = await createTenant();
    const otherKey = await createKey(org.id, "full");
    const key = newKey();
    const first = await create(fullKey, { name: "Two keys" }, key);
    const second = await create(otherKey, { name: "Two keys" }, key);
    assert.deepEqual(asSeen(second), asSeen(first));
    assert.equal(second.headers["idempotent-replayed"], "true");
    assert.equal(await formCount(org.id), 1);
  });

  test("are kept 24 hours; after that the same key creates again", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const body = { name: "Aging" };
    const first = await create(fullKey, body, key);
    assertCreated(first, body, org.id);

    await ageKey(org.id, key, 23);
    const within = await create(fullKey, body, key);
    assert.deepEqual(asSeen(within), asSeen(first));
    assert.equal(within.headers["idempotent-replayed"], "true");

    await ageKey(org.id, key, 2);
    const later = await create(fullKey, body, key);
    assertCreated(later, body, org.id);
    assert.notEqual(later.body.id, first.body.id);
    assert.equal(later.headers["idempotent-replayed"], undefined);
    assert.equal(await formCount(org.id), 2);
    // The key now stands for the new form.
    const [row] = await storedKeys(org.id);
    assert.equal(row?.body, later.text);
    assert.deepEqual(asSeen(await create(fullKey, body, key)), asSeen(later));
  });

  test("an expired key may carry a different body", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    assertCreated(await create(fullKey, { name: "Old" }, key), { name: "Old" }, org.id);
    await ageKey(org.id, key, 25);
    assertCreated(await create(fullKey, { name: "New" }, key), { name: "New" }, org.id);
    assert.equal(await formCount(org.id), 2);
  });

  test("expired keys are purged by later keyed creates", async () => {
    const { org, fullKey } = await createTenant();
    const [old1, old2, fresh] = [newKey(), newKey(), newKey()];
    for (const key of [old1, old2, fresh]) {
      assert.equal((await create(fullKey, { name: key }, key)).status, 201);
    }
    await ageKey(org.id, old1, 25);
    await ageKey(org.id, old2, 24.5);
    await ageKey(org.id, fresh, 23);
    assert.equal((await create(fullKey, { name: "trigger" }, newKey())).status, 201);
    const left = (await storedKeys(org.id)).map((row) => row.key);
    assert.ok(!left.includes(old1) && !left.includes(old2), `expired keys left: ${left}`);
    assert.ok(left.includes(fresh), "a key younger than 24 hours is kept");
    assert.equal(left.length, 2);
  });

  test("a request without a key stores nothing and is never replayed", async () => {
    const { org, fullKey } = await createTenant();
    const first = await create(fullKey, { name: "Plain" });
    const second = await create(fullKey, { name: "Plain" });
    assertCreated(first, { name: "Plain" }, org.id);
    assertCreated(second, { name: "Plain" }, org.id);
    assert.notEqual(first.body.id, second.body.id);
    assert.equal(second.headers["idempotent-replayed"], undefined);
    assert.equal(await formCount(org.id), 2);
    assert.deepEqual(await storedKeys(org.id), []);
  });
});

describe("the header", () => {
  const refusals: [string, string | string[], string][] = [
    ["empty", "", "must not be empty"],
    ["longer than 255 characters", "k".repeat(256), "must be at most 255 characters"],
    ["not ASCII", "clé-1", "must be printable ASCII characters"],
    ["a control character", "a\tb", "must be printable ASCII characters"],
    ["given twice", ["one", "two"], "must be given once"],
  ];
  for (const [what, value, reason] of refusals) {
    test(`${what}: 422, and nothing is written`, async () => {
      const { org, fullKey } = await createTenant();
      const res = await create(fullKey, { name: "Refused" }, value);
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 422, body: unprocessable(`Idempotency-Key: ${reason}`) },
      );
      assert.equal(await formCount(org.id), 0);
      assert.deepEqual(await storedKeys(org.id), []);
    });
  }

  test("takes 1 to 255 printable ASCII characters, and any header name case", async () => {
    const { org, fullKey } = await createTenant();
    const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
    for (const key of ["k", "K".repeat(255), `x${printable}x`]) {
      const first = await create(fullKey, { name: "Accepted" }, key);
      assert.equal(first.status, 201, first.text);
      const res = await app.inject({
        method: "POST",
        url: "/api/v1/forms",
        headers: { "api-key": fullKey, "content-type": "application/json", "idempotency-key": key },
        payload: JSON.stringify({ name: "Accepted" }),
      });
      assert.equal(res.body, first.text);
      assert.equal(res.headers["idempotent-replayed"], "true");
    }
    assert.equal(await formCount(org.id), 3);
  });

  test("is documented on POST /forms in the OpenAPI document", async () => {
    const doc = (await app.inject({ url: "/api/v1/openapi.json" })).json();
    const operation = doc.paths["/api/v1/forms"].post;
    const parameter = operation.parameters.find((p: Body) => p.in === "header");
    assert.equal(parameter.name, "Idempotency-Key");
    assert.equal(parameter.required, false);
    assert.deepEqual(parameter.schema, { type: "string" });
    assert.match(parameter.description, /Idempotent-Replayed: true/);
    assert.match(operation.description, /Idempotent-Replayed/);
  });
});

describe("failed requests store nothing", () => {
  test("a validation failure, then the corrected body under the same key", async () => {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const bad = await create(fullKey, { type: "hosted" }, key);
    assert.deepEqual(
      { status: bad.status, body: bad.body },
      { status: 422, body: unprocessable("name: is required") },
    );
    assert.deepEqual(await storedKeys(org.id), []);
    const good = await create(fullKey, { name: "Fixed", type: "hosted" }, key);
    assertCreated(good, { name: "Fixed", type: "hosted" }, org.id);
    assert.equal(good.headers["idempotent-replayed"], undefined);
    assert.equal(await formCount(org.id), 1);
  });

  test("a paid-plan refusal, then the corrected body under the same key", async () => {
    const { org, fullKey } = await createTenant("free");
    const key = newKey();
    const refused = await create(fullKey, { name: "Plan", useCustomRedirect: true }, key);
    assert.deepEqual(
      { status: refused.status, body: refused.body },
      {
        status: 403,
        body: { error: { code: "forbidden", message: "useCustomRedirect: needs the paid plan" } },
      },
    );
    assert.equal(await formCount(org.id), 0);
    assert.deepEqual(await storedKeys(org.id), []);
    // The refusal is not replayed: the same request is refused again, by the plan check.
    assert.equal(
      (await create(fullKey, { name: "Plan", useCustomRedirect: true }, key)).status,
      403,
    );
    const good = await create(fullKey, { name: "Plan" }, key);
    assertCreated(good, { name: "Plan" }, org.id);
    assert.equal(await formCount(org.id), 1);
  });

  test("a refused key or scope is answered before the key is looked at", async () => {
    const { org, fullKey, readKey } = await createTenant();
    const key = newKey();
    const first = await create(fullKey, { name: "Guarded" }, key);
    assert.equal(first.status, 201);
    const noKey = await create("fdk_not-a-key", { name: "Guarded" }, key);
    assert.equal(noKey.status, 401);
    assert.equal(noKey.body.error.code, "unauthorized");
    const readOnly = await create(readKey, { name: "Guarded" }, key);
    assert.equal(readOnly.status, 403);
    assert.equal(readOnly.body.error.code, "forbidden");
    for (const answer of [noKey, readOnly]) {
      assert.equal(answer.headers["idempotent-replayed"], undefined);
      assert.ok(!answer.text.includes(first.body.id), "no stored response leaks to a refusal");
    }
    assert.equal(await formCount(org.id), 1);
  });
});

test("a replay spends quota like any request, and is refused when it is spent", async () => {
  const limited = await buildTestApp({ rateLimitMax: 3, rateLimitWindowSeconds: 86_400 });
  try {
    const { org, fullKey } = await createTenant();
    const key = newKey();
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++)
      answers.push(await create(fullKey, { name: "Q" }, key, limited.app));
    assert.deepEqual(
      answers.map((a) => [a.status, a.headers["x-ratelimit-remaining"]]),
      [
        [201, "2"],
        [201, "1"],
        [201, "0"],
        [429, "0"],
      ],
    );
    assert.equal(answers[3]?.body.error.code, "rate_limit_exceeded");
    assert.equal(answers[3]?.headers["idempotent-replayed"], undefined);
    assert.equal(await formCount(org.id), 1);
  } finally {
    await limited.close();
  }
});

test("a replay carries no secret", async () => {
  const { org, fullKey } = await createTenant();
  const secret = "captcha-secret-idempotent-41d9";
  const body = { name: "Secret", providerCaptchaEnabled: true, providerCaptchaSecretKey: secret };
  const key = newKey();
  const first = await create(fullKey, body, key);
  assertCreated(first, body, org.id);
  const replay = await create(fullKey, body, key);
  assert.equal(replay.headers["idempotent-replayed"], "true");
  for (const answer of [first, replay]) assertNoSecret(answer, secret);
  const [row] = await storedKeys(org.id);
  assert.ok(!JSON.stringify(row).includes(secret), "the stored response holds no secret");
  assert.deepEqual(replay.body, { ...DEFAULTS, ...first.body });
});
