import assert from "node:assert/strict";
import { test } from "node:test";
import { isStoreUnreachable, openDatabase } from "../../src/db/database.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Found by the intake's PostgreSQL-restart reliability test: a server restart while a
// transaction's connection sat between two statements emitted 'error' on a client nobody
// listened to, and the process died.
test("a connection lost between two statements of a transaction fails that transaction only", {
  skip: !process.env.DATABASE_URL,
}, async () => {
  const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: null });
  try {
    const outcome = await db
      .transaction(async (tx) => {
        const [row] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        // From another connection, as a restart would: the server ends this one between statements.
        await db.query("SELECT pg_terminate_backend($1)", [row?.pid]);
        await sleep(200);
        await tx.query("SELECT 1");
        return "committed";
      })
      .catch((error: unknown) => error);
    assert.ok(outcome instanceof Error, `the transaction failed, not ${String(outcome)}`);
    assert.ok(isStoreUnreachable(outcome), `read as the store being unreachable: ${outcome}`);
    // The pool goes on with a new connection.
    assert.deepEqual(await db.query("SELECT 1 AS one"), [{ one: 1 }]);
  } finally {
    await db.close();
  }
});
