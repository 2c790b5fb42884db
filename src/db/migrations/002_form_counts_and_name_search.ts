import type { Migration } from "./migration.ts";

export const migration: Migration = {
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
};
