import { migration as m001 } from "./001_organizations_keys_forms.ts";
import { migration as m002 } from "./002_form_counts_and_name_search.ts";
import { migration as m003 } from "./003_idempotency_keys.ts";
import { migration as m004 } from "./004_name_search_normalized.ts";
import { migration as m005 } from "./005_submissions.ts";
import { migration as m006 } from "./006_submission_counts.ts";
import { migration as m007 } from "./007_submission_files.ts";
import { migration as m008 } from "./008_email_records.ts";
import { migration as m009 } from "./009_webhooks.ts";
import { migration as m010 } from "./010_file_chunks.ts";
import { migration as m015 } from "./015_submission_events_outbox.ts";
import { migration as m016 } from "./016_email_records_by_form.ts";
import { migration as m017 } from "./017_form_revisions.ts";
import { migration as m018 } from "./018_file_chunks_lz4.ts";
import type { Migration } from "./migration.ts";

/** Applied in this order; each name is recorded once applied. New migrations go at the end. */
export const MIGRATIONS: readonly Migration[] = [
  m001,
  m002,
  m003,
  m004,
  m005,
  m006,
  m007,
  m008,
  m009,
  m010,
  m015,
  m016,
  m017,
  m018,
];
