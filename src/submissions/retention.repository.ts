import type { Queryable } from "../db/database.ts";

/**
 * The instant before which a form's submissions have expired ($1 is now): its storage duration
 * in days, everything for `never` (it keeps nothing), NULL (nothing) for `forever`. Spam expires
 * after 30 days at most. Read from the form as each statement runs, so a duration changed
 * meanwhile is the one applied.
 */
const CUTOFFS = `CROSS JOIN LATERAL (
    SELECT CASE WHEN d IN ('30', '60', '90', '365') THEN $1::timestamptz - make_interval(days => d::int)
                WHEN d = 'never' THEN $1::timestamptz
           END AS inbox
      FROM (SELECT f.settings ->> 'submissionStorageDuration' AS d) duration
  ) kept
  CROSS JOIN LATERAL (SELECT GREATEST(kept.inbox, $1::timestamptz - interval '30 days') AS spam) kept_spam`;

/**
 * Up to `limit` forms after `afterId` (in id order) that hold expired submissions. Each check is
 * one descent of the form's index per spam state.
 */
export async function formsWithExpiredSubmissions(
  db: Queryable,
  now: Date,
  afterId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT f.id FROM forms f ${CUTOFFS}
      WHERE f.id > $2
        AND (EXISTS (SELECT 1 FROM submissions s
                      WHERE s.form_id = f.id AND s.is_spam AND s.created_at < kept_spam.spam)
          OR EXISTS (SELECT 1 FROM submissions s
                      WHERE s.form_id = f.id AND NOT s.is_spam AND s.created_at < kept.inbox))
      ORDER BY f.id LIMIT $3`,
    [now, afterId, limit],
  );
  return rows.map((row) => row.id);
}

/**
 * Deletes up to `limit` expired submissions of one form and spam state, in one statement (its
 * own short transaction). Rows another instance's pass (or a request) has locked are skipped,
 * not waited for: that instance deletes them.
 */
export async function deleteExpiredBatch(
  db: Queryable,
  now: Date,
  formId: string,
  isSpam: boolean,
  limit: number,
): Promise<number> {
  const rows = await db.query<{ deleted: number }>(
    `WITH doomed AS (
       SELECT s.id FROM forms f ${CUTOFFS}
         JOIN submissions s ON s.form_id = f.id AND s.is_spam = $3
        WHERE f.id = $2
          AND s.created_at < CASE WHEN $3 THEN kept_spam.spam ELSE kept.inbox END
        LIMIT $4 FOR UPDATE OF s SKIP LOCKED),
     gone AS (DELETE FROM submissions WHERE id IN (SELECT id FROM doomed) RETURNING 1)
     SELECT count(*)::int AS deleted FROM gone`,
    [now, formId, isSpam, limit],
  );
  return rows[0]?.deleted ?? 0;
}
