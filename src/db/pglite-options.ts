import { PGlite, type PGliteOptions, types } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";

/**
 * Memory (docs/performance.md, "Embedded store memory"). PostgreSQL's default 128 MB of shared
 * buffers cost about 100 MB of resident memory once the store is used; an embedded store is small
 * and the operating system caches its files anyway: 8 MB (16 until 2026-11-29, which cost 8 to
 * 12 MB more at the embedded bench's peak for as many lists, searches and creates a second). A new
 * store's initdb (pglite-initdb.ts) gets the same shared buffers, and WAL segments of 1 MB
 * instead of 16.
 */
const SHARED_BUFFERS = ["-c", "shared_buffers=8MB"];

/**
 * ANALYZE keeps a sample of 300 rows per unit of statistics target in memory, whole rows: at
 * PostgreSQL's default (100), 30,000 forms of about 2 kB, which grew PGlite's WebAssembly memory
 * by about 60 MB that it never gives back. At 10 (PostgreSQL's default until 8.4) the sample is
 * 3,000 rows and the growth about 8 MB; the store's queries keep their plans (decisions.md).
 */
const STATISTICS_TARGET = ["-c", "default_statistics_target=10"];

/**
 * A `bytea` parameter goes to the store as it is: PGlite's bind message sends a byte array in
 * the binary format, where its own serializer would first spell it out as hex text two characters
 * at a time (a million-element array for a file's 1 MB slice). Text, for a caller that spells a
 * value out itself, stays text.
 */
const passBytes = (value: Uint8Array | string) => value as string;

/** How the embedded store is opened, by its thread and by the process that creates it. */
export const PGLITE_OPTIONS: PGliteOptions = {
  extensions: { pg_trgm },
  startParams: [...PGlite.defaultStartParams, ...SHARED_BUFFERS, ...STATISTICS_TARGET],
  initDbStartParams: [...SHARED_BUFFERS, "--wal-segsize=1"],
  serializers: { [types.BYTEA]: passBytes },
};
