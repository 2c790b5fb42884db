import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // What the intake keeps of a form is checked against the row's version when a submission is
  // stored. The row's xmin also moves when the counts' fold writes the total into the row, every
  // few seconds for a busy form, which sent the next submission of every such form through the
  // slow path again (a new read and a transaction of three round trips). The revision moves only
  // when what the intake reads changes.
  name: "017_form_revisions",
  statements: ["ALTER TABLE forms ADD COLUMN revision bigint NOT NULL DEFAULT 0"],
};
