import assert from "node:assert/strict";
import { test } from "node:test";
import { isStoreUnreachable, openDatabase } from "../../src/db/database.ts";

test("PostgreSQL: statements are stopped by the server after the timeout, without JIT", {
  skip: !process.env.DATABASE_URL && "DATABASE_URL is not set",
}, async () => {
  const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: null });
  try {
    assert.deepEqual(await db.query("SHOW statement_timeout"), [{ statement_timeout: "5s" }]);
    assert.deepEqual(await db.query("SHOW jit"), [{ jit: "off" }]);
    assert.ok(isStoreUnreachable(Object.assign(new Error("canceled"), { code: "57014" })));
  } finally {
    await db.close();
  }
});
