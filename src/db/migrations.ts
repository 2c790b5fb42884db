import type { Database } from "./database.ts";
import { MIGRATIONS } from "./migrations/index.ts";

// Any constant works; it only has to be the same for every instance of formdeck.
const MIGRATION_LOCK = 7_310_466_318;

/**
 * Applies the migrations not applied yet, each in its own transaction. An advisory lock makes
 * instances that start together against one PostgreSQL take turns instead of racing.
 */
export async function migrate(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    // A migration rewrites whole tables: it is not bounded as a request's statement is.
    await tx.query("SET LOCAL statement_timeout = 0");
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK], { unbounded: true });
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set(
      (await tx.query<{ name: string }>("SELECT name FROM schema_migrations")).map((r) => r.name),
    );
    const applied: string[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.name)) continue;
      for (const statement of migration.statements) {
        await tx.query(statement, [], { unbounded: true });
      }
      await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [migration.name]);
      applied.push(migration.name);
    }
    return applied;
  });
}
