import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // A submission's notifications, written by the statement that stores it and turned into email
  // records, deliveries and jobs by a relay right after (src/notifications/event-relay.ts): the
  // intake's one statement stays one statement for forms that notify. No NOTIFY announces them:
  // PostgreSQL commits the transactions that notify one at a time, which held every intake with
  // notifications behind one lock; the instance that stored an event wakes its own relay.
  name: "015_submission_events_outbox",
  statements: [
    `CREATE TABLE submission_events_outbox (
      id bigserial PRIMARY KEY,
      form_id text COLLATE "C" NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
      event jsonb NOT NULL,
      -- The relay of the instance that stored it takes it; any relay once it is older than a few
      -- seconds (its instance stopped).
      relay text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
      )`,
    "CREATE INDEX submission_events_outbox_form ON submission_events_outbox (form_id)",
  ],
};
