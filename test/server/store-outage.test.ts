import assert from "node:assert/strict";
import { test } from "node:test";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { type Database, isStoreUnreachable, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { createMemoryRateLimiter } from "../../src/rate-limit/memory-rate-limiter.ts";
import { checkEveryResponse } from "../http/response-conformance.ts";

const unreachable = {
  error: { code: "service_unavailable", message: "store: is not reachable" },
};

async function answersWhileDown(db: Database) {
  const limiter = createMemoryRateLimiter({ windowSeconds: 60 });
  const app = await buildApp({ config: loadConfig({}), db, limiter });
  await checkEveryResponse(app);
  try {
    const answers = await Promise.all([
      app.inject({ url: "/api/v1/forms", headers: { "api-key": "fdk_anything" } }),
      app.inject({
        method: "POST",
        url: "/api/v1/forms",
        headers: { "api-key": "fdk_anything", "content-type": "application/json" },
        payload: "{}",
      }),
    ]);
    return answers.map((res) => [res.statusCode, res.headers["retry-after"], res.json()]);
  } finally {
    await app.close();
    await limiter.close();
  }
}

test("a PostgreSQL that cannot be reached → 503 with Retry-After, not a 500", async () => {
  // Port 1: nothing listens there, so every connection is refused at once.
  const db = await openDatabase({ databaseUrl: "postgres://root@127.0.0.1:1/none", dataDir: null });
  try {
    assert.deepEqual(await answersWhileDown(db), [
      [503, "1", unreachable],
      [503, "1", unreachable],
    ]);
  } finally {
    await db.close();
  }
});

test("a closed embedded store → 503 as well", async () => {
  const db = await openDatabase({ databaseUrl: null, dataDir: null });
  await migrate(db);
  await db.close();
  assert.deepEqual(await answersWhileDown(db), [
    [503, "1", unreachable],
    [503, "1", unreachable],
  ]);
});

test("errors of the statement itself are not taken for an outage", () => {
  const syntax = Object.assign(new Error('syntax error at or near "SELEC"'), { code: "42601" });
  const unique = Object.assign(new Error("duplicate key value"), { code: "23505" });
  assert.equal(isStoreUnreachable(syntax), false);
  assert.equal(isStoreUnreachable(unique), false);
  assert.equal(isStoreUnreachable(new TypeError("x is undefined")), false);
  const shutdown = Object.assign(new Error("terminating connection"), { code: "57P01" });
  assert.equal(isStoreUnreachable(shutdown), true);
  assert.equal(isStoreUnreachable(new Error("Connection terminated unexpectedly")), true);
});
