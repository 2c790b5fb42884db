import type { Migration } from "./migration.ts";

export const migration: Migration = {
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
    "CREATE INDEX submissions_by_form ON submissions (form_id, is_spam, created_at DESC, id DESC)",
    "CREATE INDEX submissions_search ON submissions USING gin (search_text gin_trgm_ops)",
    "CREATE INDEX submissions_by_created ON submissions (created_at)",
  ],
};
