import type { Queryable } from "../db/database.ts";

/**
 * A form's count of accepted, non-spam submissions is `forms.submissions` plus its slots in
 * `submission_count_slots`. Every statement that changes the count is in this file.
 */

/** Slots per form: one per connection (modulo), so that concurrent intakes rarely share a row. */
const SLOTS = 16;

/**
 * The count of the form in the row named `forms`, as SQL: the folded total plus the slots not
 * folded yet (at most 16 rows, read through their primary key).
 */
export const SUBMISSIONS_SQL = `(forms.submissions + COALESCE((SELECT sum(c.count)
    FROM submission_count_slots c WHERE c.form_id = forms.id), 0))::int`;

/**
 * A statement that adds one to the caller's slot of the form of each row of `source`, a relation
 * with a `form_id` column (a table, or a data-modifying WITH query): the increase of
 * changeSubmissionCount, made by the statement that stores the rows.
 */
export const countIntoSlots = (source: string) =>
  `INSERT INTO submission_count_slots AS s (form_id, slot, count)
   SELECT form_id, pg_backend_pid() % ${SLOTS}, count(*) FROM ${source} GROUP BY form_id
   ON CONFLICT (form_id, slot) DO UPDATE SET count = s.count + EXCLUDED.count`;

/**
 * Adds `delta` (+1 for an accepted submission or one moved out of spam, -1 for one moved into
 * spam) in the caller's transaction. An increase goes to the slot of the caller's connection,
 * never the form's row, so intakes into one form do not queue behind each other. A decrease (a
 * person marking spam) goes to the form's row: slots only ever hold increases, which the list by
 * count relies on.
 */
export async function changeSubmissionCount(
  db: Queryable,
  formId: string,
  delta: number,
): Promise<void> {
  if (delta < 0) {
    await db.query("UPDATE forms SET submissions = submissions + $2 WHERE id = $1", [
      formId,
      delta,
    ]);
    return;
  }
  await db.query(
    `INSERT INTO submission_count_slots AS s (form_id, slot, count)
     VALUES ($1, pg_backend_pid() % ${SLOTS}, $2)
     ON CONFLICT (form_id, slot) DO UPDATE SET count = s.count + EXCLUDED.count`,
    [formId, delta],
  );
}

/**
 * Moves the slots of up to `limit` forms into forms.submissions, each form's total unchanged at
 * every instant (one statement). Rows another transaction holds are skipped, not waited for:
 * the pass never holds up an intake, and instances running it at once share out the forms.
 */
export async function foldSubmissionCounts(db: Queryable, limit: number): Promise<number> {
  const rows = await db.query<{ id: string }>(
    `WITH due AS (
       SELECT f.id FROM forms f
        WHERE f.id IN (SELECT DISTINCT form_id FROM submission_count_slots LIMIT $1)
        FOR NO KEY UPDATE OF f SKIP LOCKED
     ), moved AS (
       DELETE FROM submission_count_slots s
        WHERE (s.form_id, s.slot) IN (
          SELECT c.form_id, c.slot FROM submission_count_slots c
           WHERE c.form_id IN (SELECT id FROM due) FOR UPDATE SKIP LOCKED)
       RETURNING s.form_id, s.count
     ), totals AS (
       SELECT form_id, sum(count) AS count FROM moved GROUP BY form_id
     )
     UPDATE forms SET submissions = forms.submissions + totals.count::int
       FROM totals WHERE forms.id = totals.form_id
     RETURNING forms.id`,
    [limit],
  );
  return rows.length;
}
