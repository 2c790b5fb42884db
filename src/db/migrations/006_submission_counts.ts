import type { Migration } from "./migration.ts";

export const migration: Migration = {
  // The submissions list answers its inbox and spam totals without counting a form's rows on
  // every request: counts are kept as rows are inserted, deleted or moved into or out of spam.
  name: "006_submission_counts",
  statements: [
    // Several slots per form and spam state: concurrent intake into one busy form would
    // otherwise queue on one row lock. A total is the sum of at most 16 rows.
    `CREATE TABLE submission_counts (
      form_id text COLLATE "C" NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
      is_spam boolean NOT NULL,
      slot smallint NOT NULL,
      count bigint NOT NULL,
      PRIMARY KEY (form_id, is_spam, slot)
      )`,
    `INSERT INTO submission_counts (form_id, is_spam, slot, count)
      SELECT form_id, is_spam, 0, count(*) FROM submissions GROUP BY form_id, is_spam`,
    // Statement-level triggers: a bulk insert or a retention batch updates each count once.
    `CREATE FUNCTION count_submissions_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO submission_counts AS c (form_id, is_spam, slot, count)
        SELECT form_id, is_spam, pg_backend_pid() % 16, count(*)
          FROM inserted GROUP BY form_id, is_spam
        ON CONFLICT (form_id, is_spam, slot) DO UPDATE SET count = c.count + EXCLUDED.count;
      RETURN NULL;
    END $$`,
    // Rows deleted with their form need no count: the counts go with it.
    `CREATE FUNCTION count_submissions_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO submission_counts AS c (form_id, is_spam, slot, count)
        SELECT form_id, is_spam, pg_backend_pid() % 16, -count(*)
          FROM deleted
         WHERE EXISTS (SELECT 1 FROM forms f WHERE f.id = deleted.form_id)
         GROUP BY form_id, is_spam
        ON CONFLICT (form_id, is_spam, slot) DO UPDATE SET count = c.count + EXCLUDED.count;
      RETURN NULL;
    END $$`,
    // A row never changes form; an update may move it into or out of spam.
    `CREATE FUNCTION count_submissions_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO submission_counts AS c (form_id, is_spam, slot, count)
        SELECT form_id, is_spam, pg_backend_pid() % 16, sum(delta)
          FROM (SELECT form_id, is_spam, 1 AS delta FROM updated
                UNION ALL SELECT form_id, is_spam, -1 FROM previous) AS moved
         GROUP BY form_id, is_spam
        HAVING sum(delta) <> 0
        ON CONFLICT (form_id, is_spam, slot) DO UPDATE SET count = c.count + EXCLUDED.count;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER submissions_counted_on_insert AFTER INSERT ON submissions
      REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION count_submissions_inserted()`,
    `CREATE TRIGGER submissions_counted_on_delete AFTER DELETE ON submissions
      REFERENCING OLD TABLE AS deleted
      FOR EACH STATEMENT EXECUTE FUNCTION count_submissions_deleted()`,
    `CREATE TRIGGER submissions_counted_on_update AFTER UPDATE ON submissions
      REFERENCING OLD TABLE AS previous NEW TABLE AS updated
      FOR EACH STATEMENT EXECUTE FUNCTION count_submissions_updated()`,
  ],
};
