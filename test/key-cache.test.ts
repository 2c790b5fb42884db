import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createApiKey } from "../src/admin/admin.service.ts";
import type { KeyOwner } from "../src/auth/api-keys.repository.ts";
import { revokeApiKey } from "../src/auth/api-keys.repository.ts";
import { KeyCache } from "../src/auth/key-cache.ts";
import { type Database, type NotificationHandlers, openDatabase } from "../src/db/database.ts";
import { setOrganizationPlan } from "../src/organizations.repository.ts";
import { buildTestApp, closeTestDatabase, createTenant, testDatabase } from "./helpers.ts";

after(closeTestDatabase);

const FORMS = "/api/v1/forms";
const invalidKey = { error: { code: "unauthorized", message: "api-key: is not a valid key" } };

/** Polls until the key is refused; the time it took, or null after `limitMs`. */
async function msUntilRefused(app: Awaited<ReturnType<typeof buildTestApp>>["app"], key: string) {
  const started = performance.now();
  while (performance.now() - started < 2_000) {
    const res = await app.inject({ url: FORMS, headers: { "api-key": key } });
    if (res.statusCode === 401) {
      assert.deepEqual(res.json(), invalidKey);
      return performance.now() - started;
    }
    assert.equal(res.statusCode, 200, res.body);
    await sleep(5);
  }
  return null;
}

test("a key revoked by another process is refused well before the cache would expire", {
  skip: !process.env.DATABASE_URL && "needs PostgreSQL: an embedded store has one process",
}, async () => {
  const built = await buildTestApp();
  // Another process: its own connections, and no cache of this process hears it directly.
  const other = await openDatabase({
    databaseUrl: process.env.DATABASE_URL ?? null,
    dataDir: null,
  });
  try {
    const tenant = await createTenant();
    const issued = await createApiKey(await testDatabase(), {
      organizationId: tenant.org.id,
      scope: "read",
      name: "revoked elsewhere",
    });
    // Wait for the listening connection, then let the key be cached.
    await sleep(300);
    const first = await built.app.inject({ url: FORMS, headers: { "api-key": issued.key } });
    assert.equal(first.statusCode, 200);
    await revokeApiKey(other, issued.id);
    const took = await msUntilRefused(built.app, issued.key);
    assert.ok(took !== null && took < 1_000, `refused after ${took} ms`);
  } finally {
    await other.close();
    await built.close();
  }
});

test("a plan changed by another process applies well before the cache would expire", {
  skip: !process.env.DATABASE_URL && "needs PostgreSQL: an embedded store has one process",
}, async () => {
  const built = await buildTestApp();
  const other = await openDatabase({
    databaseUrl: process.env.DATABASE_URL ?? null,
    dataDir: null,
  });
  try {
    const tenant = await createTenant("paid");
    await sleep(300);
    const paidOnly = { name: "paid only", autoCloseEnabled: false, useCustomRedirect: true };
    const post = () =>
      built.app.inject({
        method: "POST",
        url: FORMS,
        headers: { "api-key": tenant.fullKey },
        payload: paidOnly,
      });
    assert.equal((await post()).statusCode, 201);
    await setOrganizationPlan(other, tenant.org.id, "free");
    const started = performance.now();
    let res = await post();
    while (res.statusCode === 201 && performance.now() - started < 2_000) {
      await sleep(5);
      res = await post();
    }
    assert.equal(res.statusCode, 403, res.body);
    assert.ok(performance.now() - started < 1_000);
  } finally {
    await other.close();
    await built.close();
  }
});

test("a cache that cannot hear announcements answers every lookup from the database", async () => {
  let handlers: NotificationHandlers | undefined;
  // Only the listening side is stood in for: what is tested is what the cache does with it.
  const listening = {
    listen(_channel: string, given: NotificationHandlers) {
      handlers = given;
      return async () => {};
    },
  } as unknown as Database;
  const cache = new KeyCache(listening);
  const owner: KeyOwner = { keyId: "key_a", organizationId: "org_a", scope: "full", plan: "free" };
  let loads = 0;
  const load = async () => {
    loads++;
    return owner;
  };
  try {
    await cache.owner("hash", load);
    await cache.owner("hash", load);
    assert.equal(loads, 2, "not listening yet: nothing is kept");
    handlers?.connected();
    await cache.owner("hash", load);
    await cache.owner("hash", load);
    assert.equal(loads, 3, "listening: the second lookup is answered from memory");
    handlers?.message("key:key_a");
    await cache.owner("hash", load);
    assert.equal(loads, 4, "an announced revocation drops the key");
    handlers?.message("org:org_a");
    await cache.owner("hash", load);
    assert.equal(loads, 5, "an announced plan change drops the organization's keys");
    handlers?.disconnected();
    await cache.owner("hash", load);
    await cache.owner("hash", load);
    assert.equal(loads, 7, "after the connection is lost nothing is answered from memory");
  } finally {
    await cache.close();
  }
});

test("an announcement during a lookup keeps its answer out of the cache", async () => {
  let handlers: NotificationHandlers | undefined;
  const listening = {
    listen(_channel: string, given: NotificationHandlers) {
      handlers = given;
      return async () => {};
    },
  } as unknown as Database;
  const cache = new KeyCache(listening);
  handlers?.connected();
  const owner: KeyOwner = { keyId: "key_b", organizationId: "org_b", scope: "read", plan: "paid" };
  let loads = 0;
  try {
    await cache.owner("hash", async () => {
      loads++;
      // The key is revoked while its (now stale) row is on its way back.
      handlers?.message("key:key_b");
      return owner;
    });
    await cache.owner("hash", async () => {
      loads++;
      return null;
    });
    assert.equal(loads, 2);
  } finally {
    await cache.close();
  }
});
