import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { test } from "node:test";
import { types } from "@electric-sql/pglite";
import { isStoreUnreachable, openDatabase } from "../../src/db/database.ts";
import { PGLITE_OPTIONS } from "../../src/db/pglite-options.ts";
import { openPgliteThread } from "../../src/db/pglite-store.ts";
import { tempDataDir } from "../server/server-process.ts";

// A statement that keeps PGlite busy for a few hundred milliseconds on this machine, and well
// within the store's 5 s statement timeout when the machine is loaded (3M rows took 2.5 to 3.7 s
// with two test suites running beside it).
const LONG_STATEMENT = "SELECT count(*)::int AS n FROM generate_series(1, 1000000)";

test("the embedded store runs its statements off the main thread: the event loop turns meanwhile", async () => {
  const db = await openDatabase({ databaseUrl: null, dataDir: null });
  try {
    let settled = false;
    const long = db.query(LONG_STATEMENT).then(() => {
      settled = true;
    });
    // On the main thread the statement would run to its end before any timer fires.
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(settled, false, "a timer fired while the statement ran");
    await long;
  } finally {
    await db.close();
  }
});

test("the embedded store: a statement past its timeout fails with query_canceled (503), the store answers afterwards", async () => {
  const db = await openPgliteThread(null, 50);
  try {
    await assert.rejects(db.query(LONG_STATEMENT), (error: Error & { code?: string }) => {
      assert.equal(error.code, "57014");
      assert.ok(isStoreUnreachable(error));
      return true;
    });
    assert.deepEqual(await db.query("SELECT 1 AS one", [], { unbounded: true }), [{ one: 1 }]);
    // Unbounded statements (migrations) are not stopped.
    assert.deepEqual(await db.query(LONG_STATEMENT, [], { unbounded: true }), [{ n: 1_000_000 }]);
  } finally {
    await db.close();
  }
});

test("the embedded store: transactions commit, roll back and keep their statements together", async () => {
  const db = await openPgliteThread(null, 5_000);
  try {
    await db.query("CREATE TABLE t (n int)");
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO t VALUES (1)");
      await tx.query("INSERT INTO t VALUES (2)");
    });
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO t VALUES (3)");
        throw new Error("changed my mind");
      }),
      /changed my mind/,
    );
    await assert.rejects(db.query("INSERT INTO t VALUES ('x')"), { code: "22P02" });
    assert.deepEqual(await db.query("SELECT n FROM t ORDER BY n"), [{ n: 1 }, { n: 2 }]);
  } finally {
    await db.close();
  }
});

test("the embedded store: LISTEN hears NOTIFY until it stops listening; a closed store says so", async () => {
  const db = await openPgliteThread(null, 5_000);
  const heard: string[] = [];
  const connected = Promise.withResolvers<void>();
  const stop = db.listen("changes", {
    message: (payload) => heard.push(payload),
    connected: () => connected.resolve(),
    disconnected: () => {},
  });
  await connected.promise;
  await db.query("SELECT pg_notify('changes', 'one')");
  await db.transaction((tx) => tx.query("SELECT pg_notify('changes', 'two')"));
  await stop();
  await db.query("SELECT pg_notify('changes', 'three')");
  assert.deepEqual(heard, ["one", "two"]);
  await db.close();
  await assert.rejects(db.query("SELECT 1"), (error) => isStoreUnreachable(error));
});

test("the embedded store is vacuumed when it opens, as autovacuum would (index-only scans need it)", async () => {
  const dataDir = await tempDataDir();
  try {
    const first = await openPgliteThread(dataDir, 5_000);
    await first.query("CREATE TABLE t (n int PRIMARY KEY)");
    await first.query("INSERT INTO t SELECT generate_series(1, 10000)");
    await first.close();
    const again = await openPgliteThread(dataDir, 5_000);
    try {
      const [table] = await again.query<{ visible: boolean }>(
        "SELECT relallvisible > 0 AS visible FROM pg_class WHERE relname = 't'",
      );
      assert.deepEqual(table, { visible: true });
    } finally {
      await again.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("the embedded store analyzes its tables once enough writes changed them, as autovacuum would", async () => {
  const db = await openDatabase({ databaseUrl: null, dataDir: null });
  try {
    await db.query("CREATE TABLE filled (n int)");
    await db.query("VACUUM filled");
    const analyzed = async () =>
      (
        await db.query<{ analyzed: boolean }>(
          `SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables
            WHERE relname = 'filled'`,
        )
      )[0]?.analyzed;
    // Below the threshold (50 writes plus a tenth of the rows), nothing is analyzed.
    for (let i = 0; i < 40; i++) await db.query("INSERT INTO filled VALUES ($1)", [i]);
    assert.equal(await analyzed(), false);
    for (let i = 40; i < 60; i++) await db.query("INSERT INTO filled VALUES ($1)", [i]);
    const deadline = Date.now() + 10_000;
    while (!(await analyzed()) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(await analyzed(), true);
    const [stats] = await db.query<{ rows: number }>(
      "SELECT reltuples::int AS rows FROM pg_class WHERE relname = 'filled'",
    );
    // Analyzed at the 50th write (the CREATE and the VACUUM count): the rows written by then.
    assert.deepEqual(stats, { rows: 48 });
  } finally {
    await db.close();
  }
});

test("the embedded store runs with its memory settings: 8 MB of shared buffers, a statistics target of 10", async () => {
  const db = await openPgliteThread(null, 5_000);
  try {
    const settings = await db.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings
        WHERE name IN ('shared_buffers', 'default_statistics_target') ORDER BY name`,
    );
    // shared_buffers counts 8 kB blocks: 1,024 of them are 8 MB.
    assert.deepEqual(settings, [
      { name: "default_statistics_target", setting: "10", unit: null },
      { name: "shared_buffers", setting: "1024", unit: "8kB" },
    ]);
  } finally {
    await db.close();
  }
});

test("the embedded store takes a bytea parameter as bytes, every byte value kept, and a text one as text", async () => {
  // PGlite's own serializer would spell the bytes out as hex text first.
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, value) => value));
  assert.equal(PGLITE_OPTIONS.serializers?.[types.BYTEA]?.(bytes), bytes);
  const db = await openPgliteThread(null, 5_000);
  try {
    await db.query("CREATE TABLE blobs (id int PRIMARY KEY, content bytea NOT NULL)");
    await db.query("INSERT INTO blobs VALUES (1, $1), (2, $2)", [bytes, "\\x00ff"]);
    const rows = await db.query<{ id: number; hex: string }>(
      "SELECT id, encode(content, 'hex') AS hex FROM blobs ORDER BY id",
    );
    assert.deepEqual(rows, [
      { id: 1, hex: bytes.toString("hex") },
      { id: 2, hex: "00ff" },
    ]);
  } finally {
    await db.close();
  }
});
