import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";

/**
 * Memory (docs/performance.md, "Embedded store memory"). PostgreSQL's default 128 MB of shared
 * buffers cost about 100 MB of resident memory once the store is used; an embedded store is small
 * and the operating system caches its files anyway: 16 MB. A new store's initdb (pglite-initdb.ts)
 * gets the same shared buffers, and WAL segments of 1 MB instead of 16.
 */
const SHARED_BUFFERS = ["-c", "shared_buffers=16MB"];

/** How the embedded store is opened, by its thread and by the process that creates it. */
export const PGLITE_OPTIONS: PGliteOptions = {
  extensions: { pg_trgm },
  startParams: [...PGlite.defaultStartParams, ...SHARED_BUFFERS],
  initDbStartParams: [...SHARED_BUFFERS, "--wal-segsize=1"],
};
