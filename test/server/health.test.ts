import assert from "node:assert/strict";
import { test } from "node:test";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { createMemoryRateLimiter } from "../../src/rate-limit/memory-rate-limiter.ts";
import { useTestApp } from "../helpers.ts";
import { checkEveryResponse } from "../http/response-conformance.ts";

const testApp = useTestApp();

test("/healthz → 200 {status: ok}, without a key", async () => {
  const res = await testApp.app.inject({ url: "/healthz" });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  assert.deepEqual(res.json(), { status: "ok" });
});

test("/readyz → 200 {status: ready} while the store answers", async () => {
  const res = await testApp.app.inject({ url: "/readyz" });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: "ready" });
});

test("/readyz → 503 once the store is closed; /healthz still 200", async () => {
  const db = await openDatabase({ databaseUrl: null, dataDir: null });
  await migrate(db);
  const limiter = createMemoryRateLimiter({ windowSeconds: 60 });
  const app = await buildApp({ config: loadConfig({}), db, limiter });
  await checkEveryResponse(app);
  try {
    const ready = await app.inject({ url: "/readyz" });
    assert.deepEqual([ready.statusCode, ready.json()], [200, { status: "ready" }]);
    await db.close();
    const res = await app.inject({ url: "/readyz" });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers["retry-after"], "1");
    assert.deepEqual(res.json(), {
      error: { code: "service_unavailable", message: "store: is not reachable" },
    });
    const live = await app.inject({ url: "/healthz" });
    assert.deepEqual([live.statusCode, live.json()], [200, { status: "ok" }]);
  } finally {
    await app.close();
    await limiter.close();
  }
});
