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
 * The next `limit` forms after `afterId` (in id order), each with whether it holds expired
 * submissions: one descent of the form's index per spam state. A statement looks at `limit`
 * forms however few of them have anything expired, so that its time is bounded on a store of
 * millions of forms (looking for `limit` matches instead ran into the statement timeout there,
 * and no pass ever finished).
 */
export async function scanForExpiredSubmissions(
  db: Queryable,
  now: Date,
  afterId: string,
  limit: number,
): Promise<{ id: string; expired: boolean }[]> {
  return db.query<{ id: string; expired: boolean }>(
    `SELECT f.id,
            EXISTS (SELECT 1 FROM submissions s
                     WHERE s.form_id = f.id AND s.is_spam AND s.created_at < kept_spam.spam)
         OR EXISTS (SELECT 1 FROM submissions s
                     WHERE s.form_id = f.id AND NOT s.is_spam AND s.created_at < kept.inbox)
            AS expired
       FROM (SELECT id, settings FROM forms WHERE id > $2 ORDER BY id LIMIT $3) f ${CUTOFFS}
      ORDER BY f.id`,
    [now, afterId, limit],
  );
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
