import type { Database } from "./database.ts";

/**
 * Ordered, append-only. A migration never changes once released: a change to the schema is a
 * new entry at the end.
 */
const MIGRATIONS: readonly { name: string; statements: readonly string[] }[] = [
  {
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
  },
  {
    // Listing must not count a tenant's rows on every request: counts are kept as the rows change.
    // A row never changes organization or type once written, so inserts and deletes are enough.
    name: "002_form_counts_and_name_search",
    statements: [
      // Several slots per organization and type: concurrent creates in one organization would
      // otherwise all wait on one row lock. A total is the sum of at most 16 rows.
      `CREATE TABLE form_counts (
        organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        type text NOT NULL,
        slot smallint NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (organization_id, type, slot)
        )`,
      `INSERT INTO form_counts (organization_id, type, slot, count)
        SELECT organization_id, type, 0, count(*) FROM forms GROUP BY organization_id, type`,
      // Statement-level triggers: a bulk insert updates each count once, not once per row.
      `CREATE FUNCTION count_forms_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO form_counts AS c (organization_id, type, slot, count)
          SELECT organization_id, type, pg_backend_pid() % 16, count(*)
            FROM inserted GROUP BY organization_id, type
          ON CONFLICT (organization_id, type, slot) DO UPDATE SET count = c.count + EXCLUDED.count;
        RETURN NULL;
      END $$`,
      // Rows deleted with their organization need no count: the counts go with it.
      `CREATE FUNCTION count_forms_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO form_counts AS c (organization_id, type, slot, count)
          SELECT organization_id, type, pg_backend_pid() % 16, -count(*)
            FROM deleted
           WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = deleted.organization_id)
           GROUP BY organization_id, type
          ON CONFLICT (organization_id, type, slot) DO UPDATE SET count = c.count + EXCLUDED.count;
        RETURN NULL;
      END $$`,
      `CREATE TRIGGER forms_counted_on_insert AFTER INSERT ON forms
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION count_forms_inserted()`,
      `CREATE TRIGGER forms_counted_on_delete AFTER DELETE ON forms
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION count_forms_deleted()`,
      // Name search is a substring match: trigrams let it use an index at any tenant size.
      "CREATE EXTENSION IF NOT EXISTS pg_trgm",
      "CREATE INDEX forms_name_trigrams ON forms USING gin (name gin_trgm_ops)",
    ],
  },
  {
    // Idempotency-Key on create: the response a key was answered with, kept at least 24 hours.
    name: "003_idempotency_keys",
    statements: [
      // The response columns are null only inside the transaction that claims the key.
      `CREATE TABLE idempotency_keys (
        organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        key text COLLATE "C" NOT NULL,
        request_hash text NOT NULL,
        response_status integer,
        response_location text,
        response_body text,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (organization_id, key)
        )`,
      `CREATE INDEX idempotency_keys_by_created ON idempotency_keys (created_at)`,
    ],
  },
];

// Any constant works; it only has to be the same for every instance of formdeck.
const MIGRATION_LOCK = 7_310_466_318;

/**
 * Applies the migrations not applied yet, each in its own transaction. An advisory lock makes
 * instances that start together against one PostgreSQL take turns instead of racing.
 */
export async function migrate(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set(
      (await tx.query<{ name: string }>("SELECT name FROM schema_migrations")).map((r) => r.name),
    );
    const applied: string[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.name)) continue;
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [migration.name]);
      applied.push(migration.name);
    }
    return applied;
  });
}
