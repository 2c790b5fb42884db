import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // Idempotency-Key on create: the response a key was answered with, kept at least 24 hours.
  name: "003_idempotency_keys",
  statements: [
    // The response columns are null only inside the transaction that claims the key.
    `CREATE TABLE idempotency_keys (
      organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      request_hash text NOT NULL,
      response_status integer,
      response_location text,
      response_body text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, key)
      )`,
    `CREATE INDEX idempotency_keys_by_created ON idempotency_keys (created_at)`,
  ],
};
