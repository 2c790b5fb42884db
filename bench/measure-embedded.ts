import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import { type BenchOrganization, prepareOrganization } from "./bench-organizations.ts";
import { apiKeyHeader, type Measurer } from "./measurement.ts";
import type { BenchOptions } from "./options.ts";
import { listPath, SCENARIOS } from "./scenarios.ts";
import { RARE_WORD } from "./seed-forms.ts";
import { peakRssMb, startEmbeddedFormdeck } from "./servers.ts";

/** Seeding a million forms into PGlite takes minutes: the embedded store gets 10,000 at most. */
const LARGEST_EMBEDDED_SIZE = 10_000;

const EMBEDDED_SCENARIOS = [SCENARIOS.listDefaults, SCENARIOS.listSearch, SCENARIOS.create];

/**
 * For reference, no targets: a few scenarios on the embedded store, on one organization (the
 * largest size of at most 10,000), in a temporary DATA_DIR seeded through a direct PGlite
 * connection before the server opens it (PGlite allows one process). Returns the server's peak
 * RSS, or null when no embedded scenario was selected.
 */
export async function measureOnEmbeddedStore(
  options: BenchOptions,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<number | null> {
  const largestSize = options.sizes.filter((size) => size <= LARGEST_EMBEDDED_SIZE).at(-1);
  if (largestSize === undefined || !EMBEDDED_SCENARIOS.some(measurer.selects)) return null;
  const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-bench-"));
  try {
    const db = await openDatabase({ databaseUrl: null, dataDir });
    let largest: BenchOrganization;
    try {
      await migrate(db);
      largest = await prepareOrganization(db, largestSize, true, log);
      await db.query("VACUUM ANALYZE forms");
    } finally {
      await db.close();
    }
    const server = await startEmbeddedFormdeck(dataDir);
    try {
      const target = { server, headers: apiKeyHeader(largest.key) };
      const search = listPath(`?search=${RARE_WORD}`);
      await measurer.measure(SCENARIOS.listDefaults, largestSize, target, {
        kind: "get",
        path: listPath(""),
      });
      await measurer.measure(SCENARIOS.listSearch, largestSize, target, {
        kind: "get",
        path: search,
      });
      await measurer.measure(SCENARIOS.create, largestSize, target, { kind: "create" });
      return await peakRssMb(server);
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
