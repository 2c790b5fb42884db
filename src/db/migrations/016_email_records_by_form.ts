import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // Deleting a form deletes its email records (ON DELETE CASCADE), which found them by scanning
  // the whole table: the only index led by form_id held respondent records alone (the
  // autoresponder's cap). One index over every record serves both the cascade and the cap.
  name: "016_email_records_by_form",
  statements: [
    `CREATE INDEX email_records_by_form ON email_records (form_id, kind, lower(recipients), created_at)`,
    "DROP INDEX email_records_autoresponses",
  ],
};
