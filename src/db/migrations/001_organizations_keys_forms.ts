import type { Migration } from "./migration.ts";

export const migration: Migration = {
  name: "001_organizations_keys_forms",
  statements: [
    `CREATE TABLE organizations (
      id text PRIMARY KEY,
      name text NOT NULL,
      plan text NOT NULL CHECK (plan IN ('free', 'paid')),
      created_at timestamptz NOT NULL
      )`,
    `CREATE TABLE api_keys (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('read', 'full')),
      key_hash text NOT NULL UNIQUE,
      display_prefix text NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
      )`,
    `CREATE INDEX api_keys_organization ON api_keys (organization_id, created_at)`,
    // Ids order forms that tie on the sort key: "C" makes that order the same on every server.
    `CREATE TABLE forms (
      id text COLLATE "C" PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      type text NOT NULL CHECK (type IN ('endpoint', 'hosted')),
      is_closed boolean NOT NULL,
      auto_close_at timestamptz,
      submissions integer NOT NULL DEFAULT 0,
      settings jsonb NOT NULL,
      captcha_secret text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
      )`,
    `CREATE INDEX forms_by_created ON forms (organization_id, created_at DESC, id DESC)`,
    `CREATE INDEX forms_by_submissions ON forms (organization_id, submissions DESC, id DESC)`,
    `CREATE INDEX forms_auto_close_due ON forms (auto_close_at) WHERE auto_close_at IS NOT NULL`,
  ],
};
