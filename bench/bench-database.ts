import pg from "pg";
import type { Queryable } from "../src/db/database.ts";

/** The bench's own database: never the `test` one, whose rows the test suite owns. */
export const DEFAULT_BENCH_DATABASE_URL = "postgres://root@127.0.0.1:5432/formdeck_bench";

/** Creates the database of `databaseUrl` if it does not exist, from the server's `postgres` db. */
export async function ensureDatabaseExists(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
}

export interface BulkConnection extends Queryable {
  close(): Promise<void>;
}

/**
 * One connection for seeding, VACUUM and other long statements: the project's pool stops any
 * statement after 10 s, and inserting a million forms takes longer.
 */
export async function openBulkConnection(databaseUrl: string): Promise<BulkConnection> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    kind: "postgres",
    query: async <Row>(sql: string, params?: readonly unknown[]) =>
      (await client.query(sql, params as unknown[])).rows as Row[],
    close: () => client.end(),
  };
}

/**
 * Writes the seeding's pages to the data files now (a CHECKPOINT), rather than by the checkpoint
 * PostgreSQL spreads over the next minutes, beside the loads measured next. It needs a superuser
 * or the pg_checkpoint role: without either, the run goes on and says so.
 */
export async function checkpointAfterSeeding(
  db: Queryable,
  log: (line: string) => void,
): Promise<void> {
  try {
    await db.query("CHECKPOINT");
  } catch (error) {
    log(`CHECKPOINT after seeding skipped: ${(error as Error).message}`);
  }
}
