import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // Submissions received by the intake, and the counts of accepted ones.
  name: "005_submissions",
  statements: [
    `CREATE TABLE submissions (
      id text COLLATE "C" PRIMARY KEY,
      form_id text COLLATE "C" NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
      organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      is_spam boolean NOT NULL,
      spam_reason text CHECK (spam_reason IN ('honeypot', 'domain', 'captcha_unverified', 'manual')),
      answers jsonb NOT NULL,
      search_text text NOT NULL,
      meta jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
      )`,
    `CREATE INDEX submissions_by_form ON submissions (form_id, is_spam, created_at DESC, id DESC)`,
    `CREATE INDEX submissions_search ON submissions USING gin (search_text gin_trgm_ops)`,
    `CREATE INDEX submissions_by_created ON submissions (created_at)`,
    // forms.submissions plus these slots is a form's count. Concurrent intakes into one form add
    // to different slots (one per connection, at most 16 per form) instead of all waiting on the
    // form's row; a periodic pass folds the slots into forms.submissions, which the
    // sort=submissions index reads.
    `CREATE TABLE submission_count_slots (
      form_id text COLLATE "C" NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
      slot smallint NOT NULL,
      count bigint NOT NULL,
      PRIMARY KEY (form_id, slot)
      )`,
  ],
};
