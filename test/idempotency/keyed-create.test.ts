import assert from "node:assert/strict";
import { test } from "node:test";
import { createTenant, useTestApp } from "../helpers.ts";

const testApp = useTestApp();

let counter = 0;
const newKey = () => `keyed-create-${process.pid}-${Date.now()}-${++counter}`;

const deadline = { autoCloseEnabled: true, autoCloseTime: "12:00", autoCloseTimezone: "UTC" };

// A keyed create stores its answer in the statement that inserts the form, so the answer is built
// from the row before it is written, not read back: it must still be what a read gives.
for (const [what, body] of [
  ["open", { name: "open" }],
  ["closed by its switch", { name: "switched off", isClosed: true }],
  [
    "closed by a deadline already passed",
    { name: "late", ...deadline, autoCloseDate: "2020-01-01" },
  ],
  ["open until a deadline to come", { name: "early", ...deadline, autoCloseDate: "2999-01-01" }],
  ["with a limit of responses", { name: "limited", limitResponses: true, maxResponses: 1 }],
] as const) {
  test(`a keyed create's answer is the form as a read gives it: ${what}`, async () => {
    const { fullKey } = await createTenant("paid");
    const created = await testApp.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: {
        "api-key": fullKey,
        "content-type": "application/json",
        "Idempotency-Key": newKey(),
      },
      payload: JSON.stringify(body),
    });
    assert.equal(created.statusCode, 201, created.body);
    const read = await testApp.app.inject({
      url: `/api/v1/forms/${created.json().id}`,
      headers: { "api-key": fullKey },
    });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(created.json(), read.json());
    assert.equal(created.json().isClosed, what.startsWith("closed"));
  });
}

test("a key taken over once expired keeps its new answer, while the same statement purges other expired keys", async () => {
  const { org, fullKey } = await createTenant();
  const keys = [newKey(), newKey(), newKey()];
  const post = (key: string, name: string) =>
    testApp.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": fullKey, "content-type": "application/json", "Idempotency-Key": key },
      payload: JSON.stringify({ name }),
    });
  for (const key of keys) assert.equal((await post(key, "first")).statusCode, 201);
  // Older than any other expired key in the store: the first the purge would take.
  await testApp.db.query(
    `UPDATE idempotency_keys SET created_at = '1999-01-01T00:00:00Z' WHERE organization_id = $1`,
    [org.id],
  );
  const again = await post(keys[0] as string, "second");
  assert.equal(again.statusCode, 201);
  assert.equal(again.headers["idempotent-replayed"], undefined);
  const rows = await testApp.db.query<{ key: string; body: string }>(
    "SELECT key, response_body AS body FROM idempotency_keys WHERE organization_id = $1",
    [org.id],
  );
  assert.deepEqual(rows, [{ key: keys[0], body: again.body }]);
  const replay = await post(keys[0] as string, "second");
  assert.equal(replay.headers["idempotent-replayed"], "true");
  assert.equal(replay.body, again.body);
});
