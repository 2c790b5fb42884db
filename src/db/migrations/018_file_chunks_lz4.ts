import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // PostgreSQL tries to compress every slice of a file it stores (pglz by default). For a slice
  // that compresses (text, CSV, SVG, uncompressed images), pglz took 6 to 7 ms of the server's CPU
  // per MiB, more than writing the slice; lz4 takes 3 and decompresses faster for downloads. A
  // slice that does not compress costs the same with either. Only a server built with lz4 offers
  // it: PGlite is not, and keeps pglz. Slices stored before keep their compression: PostgreSQL
  // reads both.
  name: "018_file_chunks_lz4",
  statements: [
    `DO $$
     BEGIN
       IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings
                        WHERE name = 'default_toast_compression') THEN
         ALTER TABLE submission_file_chunks ALTER COLUMN content SET COMPRESSION lz4;
       END IF;
     END
     $$`,
  ],
};
