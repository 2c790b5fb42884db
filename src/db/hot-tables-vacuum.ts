import type { FastifyBaseLogger } from "fastify";
import { type BackgroundPass, startBackgroundPass } from "../jobs/background-pass.ts";
import type { Database } from "./database.ts";

/** How often the hot tables are vacuumed: bloat stays at a minute of writes. */
export const HOT_TABLES_VACUUM_MS = 60_000;

/**
 * The tables that every submission writes a row version into and that stay small: a count slot
 * (a new version of its row per submission) and an outbox event (inserted, then deleted by the
 * relay). Left to autovacuum they hold their dead rows for as long as it stays away, and it may be
 * off: then a slot table of a thousand live rows grew to 10 MB, every list by `submissions` read
 * all of it, and the planner, taking it for 160,000 rows, hashed a million forms to join them
 * (1.8 s a list). SKIP_LOCKED: an instance already vacuuming one is left to it.
 */
const VACUUM_HOT_TABLES =
  "VACUUM (SKIP_LOCKED, ANALYZE) submission_count_slots, submission_events_outbox";

export function vacuumHotTables(db: Database): Promise<unknown> {
  // VACUUM cannot be prepared: it runs through the simple protocol.
  return db.query(VACUUM_HOT_TABLES, [], { script: true, unbounded: true });
}

/**
 * On PostgreSQL, vacuums the hot tables every minute on each instance. The embedded store
 * vacuums every table itself (src/db/pglite-thread.ts): null there.
 */
export function startHotTablesVacuum(
  db: Database,
  log: FastifyBaseLogger,
  intervalMs = HOT_TABLES_VACUUM_MS,
): BackgroundPass | null {
  if (db.kind !== "postgres") return null;
  return startBackgroundPass({
    name: "hot tables vacuum",
    intervalMs,
    log,
    run: async () => {
      await vacuumHotTables(db);
    },
  });
}
