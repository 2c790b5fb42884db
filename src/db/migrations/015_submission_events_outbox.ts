import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // A submission's notifications, written by the statement that stores it and turned into email
  // records, deliveries and jobs by a relay right after (src/notifications/event-relay.ts): the
  // intake's one statement stays one statement for forms that notify.
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
    // Every instance's relay listens: an event is relayed as soon as its statement commits.
    `CREATE FUNCTION announce_submission_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM added) THEN
        PERFORM pg_notify('formdeck_submission_events', '');
      END IF;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER submission_events_announced AFTER INSERT ON submission_events_outbox
      REFERENCING NEW TABLE AS added
      FOR EACH STATEMENT EXECUTE FUNCTION announce_submission_events()`,
  ],
};
