import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // A file's contents as slices of at most 1 MiB, one row each, so that storing and serving a file
  // holds one slice in the server's memory at a time, however large the file.
  name: "010_file_chunks",
  statements: [
    `CREATE TABLE submission_file_chunks (
      file_id text COLLATE "C" NOT NULL REFERENCES submission_files (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      content bytea NOT NULL,
      PRIMARY KEY (file_id, seq)
      )`,
    `INSERT INTO submission_file_chunks (file_id, seq, content)
       SELECT id, 0, content FROM submission_files`,
    `ALTER TABLE submission_files ADD COLUMN size bigint`,
    `UPDATE submission_files SET size = octet_length(content)`,
    `ALTER TABLE submission_files ALTER COLUMN size SET NOT NULL`,
    `ALTER TABLE submission_files DROP COLUMN content`,
  ],
};
