import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // Webhooks of a form, their signing secrets, and every delivery with its attempts.
  name: "009_webhooks",
  statements: [
    // The secret signs every attempt, so it is kept as it is (a hash could not sign). After a
    // rotation the previous one signs too until `previous_secret_expires_at`: never more than two.
    `CREATE TABLE webhooks (
      id text COLLATE "C" PRIMARY KEY,
      form_id text COLLATE "C" NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
      organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      url text NOT NULL,
      description text NOT NULL,
      events text[] NOT NULL,
      enabled boolean NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
      )`,
    `CREATE INDEX webhooks_by_form ON webhooks (form_id, created_at DESC, id DESC)`,
    // `body` is the exact text signed and sent: every attempt and redelivery sends it unchanged.
    // Attempts are appended to a JSON array: a delivery has at most eight scheduled ones, plus
    // the redeliveries asked for.
    `CREATE TABLE webhook_deliveries (
      id text COLLATE "C" PRIMARY KEY,
      webhook_id text COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      event_id text NOT NULL,
      event text NOT NULL,
      body text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts jsonb NOT NULL DEFAULT '[]',
      scheduled_attempts smallint NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      created_at timestamptz NOT NULL
      )`,
    `CREATE INDEX webhook_deliveries_by_webhook
      ON webhook_deliveries (webhook_id, created_at DESC, id DESC)`,
    `CREATE INDEX webhook_deliveries_by_status
      ON webhook_deliveries (webhook_id, status, created_at DESC, id DESC)`,
  ],
};
