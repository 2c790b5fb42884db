// The hot tables (count slots, the notifications' outbox) get a row version per submission; on
// PostgreSQL each instance vacuums them every minute, whether autovacuum runs or not.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { Database } from "../../src/db/database.ts";
import { startHotTablesVacuum, vacuumHotTables } from "../../src/db/hot-tables-vacuum.ts";
import { createLogger } from "../../src/logger.ts";
import { closeTestDatabase, testDatabase } from "../helpers.ts";

after(closeTestDatabase);

const HOT = ["submission_count_slots", "submission_events_outbox"];

/**
 * When each hot table was last vacuumed and analyzed by a VACUUM statement, as the statistics say:
 * each statement of the pool is a transaction of its own, which reads them afresh.
 */
async function lastVacuums(db: Database) {
  const rows = await db.query<{ name: string; vacuumed: Date | null; analyzed: Date | null }>(
    `SELECT relname AS name, last_vacuum AS vacuumed, last_analyze AS analyzed
       FROM pg_stat_user_tables WHERE relname = ANY($1::text[])
      ORDER BY relname COLLATE "C"`,
    [HOT],
  );
  return rows;
}

const onPostgres = async () => (await testDatabase()).kind === "postgres";

test("vacuumHotTables vacuums and analyzes both hot tables", async (t) => {
  if (!(await onPostgres())) return t.skip("PostgreSQL only: the embedded store vacuums itself");
  const db = await testDatabase();
  const before = new Date(Date.now() - 1_000);
  await vacuumHotTables(db);
  const rows = await lastVacuums(db);
  assert.deepEqual(
    rows.map((row) => [
      row.name,
      (row.vacuumed ?? before) > before,
      (row.analyzed ?? before) > before,
    ]),
    HOT.map((name) => [name, true, true]),
  );
});

test("the pass vacuums on PostgreSQL at its interval; the embedded store gets none", async () => {
  const db = await testDatabase();
  const pass = startHotTablesVacuum(db, createLogger("silent"), 50);
  if (db.kind !== "postgres") {
    assert.equal(pass, null);
    return;
  }
  assert.ok(pass);
  const started = new Date();
  try {
    let vacuumed = false;
    for (let tries = 0; tries < 100 && !vacuumed; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      vacuumed = (await lastVacuums(db)).every((row) => row.vacuumed && row.vacuumed >= started);
    }
    assert.equal(vacuumed, true);
  } finally {
    await pass.stop();
  }
});
