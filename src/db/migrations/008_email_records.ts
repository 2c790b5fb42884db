import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // One row per email a submission caused (owner notification, autoresponse), with its delivery
  // state. `message` holds what is to be sent while it may still be; it is cleared once the email
  // is final, so that the answers it quotes are not kept twice.
  name: "008_email_records",
  statements: [
    // No foreign key to submissions: a `never` form's submission is never stored, yet its emails
    // go out and are recorded. Rows go with their form, and with their submission (trigger below);
    // those of a submission never stored (`submission_stored` false), once final and out of the
    // autoresponder's hour, with the retention pass.
    `CREATE TABLE email_records (
      id text COLLATE "C" PRIMARY KEY,
      form_id text COLLATE "C" NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
      submission_id text COLLATE "C" NOT NULL,
      submission_stored boolean NOT NULL,
      kind text NOT NULL CHECK (kind IN ('owner', 'respondent')),
      recipients text NOT NULL,
      subject text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
      attempts int NOT NULL DEFAULT 0,
      last_error text,
      message jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    "CREATE INDEX email_records_submission ON email_records (submission_id, created_at, id)",
    // The autoresponder's cap: one form's autoresponses to one address within the last hour.
    `CREATE INDEX email_records_autoresponses ON email_records (form_id, lower(recipients), created_at)
      WHERE kind = 'respondent'`,
    `CREATE INDEX email_records_unstored ON email_records (created_at)
      WHERE NOT submission_stored`,
    `CREATE FUNCTION delete_email_records_of_submissions() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM email_records WHERE submission_id IN (SELECT id FROM deleted);
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER submissions_delete_email_records AFTER DELETE ON submissions
      REFERENCING OLD TABLE AS deleted
      FOR EACH STATEMENT EXECUTE FUNCTION delete_email_records_of_submissions()`,
  ],
};
