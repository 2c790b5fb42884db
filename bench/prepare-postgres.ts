import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import {
  checkpointAfterSeeding,
  ensureDatabaseExists,
  openBulkConnection,
} from "./bench-database.ts";
import {
  type BenchOrganization,
  createKeys,
  formIdsOf,
  prepareOrganization,
  prepareWritesOrganization,
  WRITES_ORGANIZATION_SIZE,
} from "./bench-organizations.ts";
import type { PostgresData } from "./measure-postgres.ts";
import type { BenchOptions } from "./options.ts";
import { MANY_KEYS } from "./scenarios.ts";

/**
 * The bench database, migrated and seeded: the organizations of every size (reused from earlier
 * runs when intact) and the writes organization (anew). Its `close` ends the connection.
 */
export async function preparePostgres(
  options: BenchOptions,
  log: (line: string) => void,
): Promise<PostgresData & { close(): Promise<void> }> {
  await ensureDatabaseExists(options.databaseUrl);
  const migrating = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: null });
  try {
    await migrate(migrating);
  } finally {
    await migrating.close();
  }
  const db = await openBulkConnection(options.databaseUrl);
  try {
    const organizations: BenchOrganization[] = [];
    for (const size of options.sizes) {
      organizations.push(await prepareOrganization(db, size, options.reseed, log));
    }
    const writes = await prepareWritesOrganization(db);
    // Fresh statistics and visibility map after seeding and the writes of the last run.
    await db.query("VACUUM ANALYZE forms");
    await checkpointAfterSeeding(db, log);
    const smallest = organizations[0] as BenchOrganization;
    const manyKeys = await createKeys(db, smallest.id, MANY_KEYS);
    return {
      databaseUrl: options.databaseUrl,
      redisUrl: options.redisUrl,
      manyKeys,
      db,
      organizations,
      writes,
      readIds: await formIdsOf(db, smallest.id, 1_000),
      updateIds: await formIdsOf(db, writes.id, WRITES_ORGANIZATION_SIZE),
      close: () => db.close(),
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}
