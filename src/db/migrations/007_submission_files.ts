import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // Files uploaded with submissions, and the secret that signs links to them.
  name: "007_submission_files",
  statements: [
    // The list, the export and the record read `files` (id, field, name, type, size) without
    // touching the contents; the contents are read one file at a time, to be served.
    `ALTER TABLE submissions ADD COLUMN files jsonb NOT NULL DEFAULT '[]'`,
    `CREATE TABLE submission_files (
      id text COLLATE "C" PRIMARY KEY,
      submission_id text COLLATE "C" NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
      type text NOT NULL,
      name text NOT NULL,
      content bytea NOT NULL
      )`,
    `CREATE INDEX submission_files_by_submission ON submission_files (submission_id)`,
    // One row per secret, written once by whichever instance needs it first.
    `CREATE TABLE server_secrets (
      name text PRIMARY KEY,
      secret text NOT NULL
      )`,
  ],
};
