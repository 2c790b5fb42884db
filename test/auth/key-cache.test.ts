import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import { changePlan, createApiKey, revokeKey } from "../../src/admin/admin.service.ts";
import type { KeyOwner } from "../../src/auth/api-keys.repository.ts";
import { KeyCache } from "../../src/auth/key-cache.ts";
import type { Database, NotificationHandlers } from "../../src/db/database.ts";
import { closeTestDatabase, createTenant, testDatabase } from "../helpers.ts";
import { startServer } from "../server/server-process.ts";

after(closeTestDatabase);

const FORMS = "/api/v1/forms";
const invalidKey = { error: { code: "unauthorized", message: "api-key: is not a valid key" } };

test("a key revoked from another process is refused by a server from its very next request", {
  skip: !process.env.DATABASE_URL && "needs PostgreSQL: an embedded store has one process",
}, async () => {
  const server = await startServer({ DATABASE_URL: process.env.DATABASE_URL });
  try {
    const db = await testDatabase();
    const tenant = await createTenant("paid");
    const request = (key: string, init: RequestInit = {}) =>
      fetch(`${server.url}${FORMS}`, { ...init, headers: { "api-key": key, ...init.headers } });
    // Several keys: a race between the revocation and the cache would not lose every time.
    for (let i = 0; i < 10; i++) {
      const issued = await createApiKey(db, {
        organizationId: tenant.org.id,
        scope: "read",
        name: `revoked ${i}`,
      });
      assert.equal((await request(issued.key)).status, 200);
      assert.equal((await request(issued.key)).status, 200, "now answered from the cache");
      await revokeKey(db, issued.id);
      const refused = await request(issued.key);
      assert.deepEqual([refused.status, await refused.json()], [401, invalidKey], `key ${i}`);
    }
    const paidOnly = () =>
      request(tenant.fullKey, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "paid only", useCustomRedirect: true }),
      });
    assert.equal((await paidOnly()).status, 201);
    await changePlan(db, tenant.org.id, "free");
    assert.equal((await paidOnly()).status, 403, "the downgrade applies to the next request");
  } finally {
    await server.stop();
  }
});

test("a revocation returns only once every listening instance has confirmed it", {
  skip: !process.env.DATABASE_URL && "needs PostgreSQL: an embedded store has one process",
}, async () => {
  // An instance that takes 300 ms to drop the key: it listens the way formdeck's caches do.
  const slow = new pg.Client({
    connectionString: process.env.DATABASE_URL,
    application_name: "listen:formdeck_key_changes",
  });
  await slow.connect();
  const confirmedAt: number[] = [];
  slow.on("notification", (note) => {
    setTimeout(() => {
      confirmedAt.push(performance.now());
      void slow.query("SELECT pg_notify('formdeck_key_changes_done', $1)", [note.payload]);
    }, 300);
  });
  await slow.query("LISTEN formdeck_key_changes");
  try {
    const db = await testDatabase();
    const tenant = await createTenant();
    const issued = await createApiKey(db, {
      organizationId: tenant.org.id,
      scope: "read",
      name: "revoked slowly",
    });
    const started = performance.now();
    await revokeKey(db, issued.id);
    const returned = performance.now();
    assert.equal(confirmedAt.length, 1);
    assert.ok(returned >= (confirmedAt[0] as number), "returned before the confirmation");
    assert.ok(returned - started < 1_900, "waited for the timeout instead of the confirmation");
  } finally {
    await slow.end();
  }
});

/**
 * A cache whose announcements the test sends itself. Only the listening side is stood in for:
 * what is tested is what the cache does with what it hears.
 */
function cacheWithAnnouncer() {
  const announcer: { handlers?: NotificationHandlers } = {};
  const listening = {
    listen(_channel: string, given: NotificationHandlers) {
      announcer.handlers = given;
      return async () => {};
    },
  } as unknown as Database;
  const cache = new KeyCache(listening);
  return { cache, handlers: announcer.handlers as NotificationHandlers };
}

test("a cache that cannot hear announcements answers every lookup from the database", async () => {
  const { cache, handlers } = cacheWithAnnouncer();
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
    handlers.connected();
    await cache.owner("hash", load);
    await cache.owner("hash", load);
    assert.equal(loads, 3, "listening: the second lookup is answered from memory");
    handlers.message("key:key_a");
    await cache.owner("hash", load);
    assert.equal(loads, 4, "an announced revocation drops the key");
    handlers.message("org:org_a");
    await cache.owner("hash", load);
    assert.equal(loads, 5, "an announced plan change drops the organization's keys");
    handlers.disconnected();
    await cache.owner("hash", load);
    await cache.owner("hash", load);
    assert.equal(loads, 7, "after the connection is lost nothing is answered from memory");
  } finally {
    await cache.close();
  }
});

test("an announcement during a lookup keeps its answer out of the cache", async () => {
  const { cache, handlers } = cacheWithAnnouncer();
  handlers.connected();
  const owner: KeyOwner = { keyId: "key_b", organizationId: "org_b", scope: "read", plan: "paid" };
  let loads = 0;
  try {
    await cache.owner("hash", async () => {
      loads++;
      // The key is revoked while its (now stale) row is on its way back.
      handlers.message("key:key_b");
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
