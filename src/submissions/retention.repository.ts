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
 * submissions, told by its oldest submission of each spam state: one descent of the form's index
 * each. A statement looks at `limit` forms however few of them have anything expired, so that
 * its time is bounded on a store of millions of forms (looking for `limit` matches instead ran
 * into the statement timeout there, and no pass ever finished). The oldest is asked with `min`,
 * not `EXISTS`: for a form of many submissions PostgreSQL took a sequential scan to be the
 * quickest way to a first match, and read the whole table for each such form.
 */
export const EXPIRED_FORMS_SCAN = `SELECT f.id,
       COALESCE((SELECT min(s.created_at) FROM submissions s
                  WHERE s.form_id = f.id AND s.is_spam) < kept_spam.spam
             OR (SELECT min(s.created_at) FROM submissions s
                  WHERE s.form_id = f.id AND NOT s.is_spam) < kept.inbox, false) AS expired
  FROM (SELECT id, settings FROM forms WHERE id > $2 ORDER BY id LIMIT $3) f ${CUTOFFS}
 ORDER BY f.id`;

export async function scanForExpiredSubmissions(
  db: Queryable,
  now: Date,
  afterId: string,
  limit: number,
): Promise<{ id: string; expired: boolean }[]> {
  return db.query<{ id: string; expired: boolean }>(EXPIRED_FORMS_SCAN, [now, afterId, limit]);
}

/**
 * Up to `limit` expired submissions of one form and spam state, oldest first, along the form's
 * index: the cutoff is read first, so that it bounds the index range (a join to the form let
 * PostgreSQL filter a sequential scan of every submission instead).
 */
export const EXPIRED_BATCH = `SELECT s.id FROM submissions s
  WHERE s.form_id = $2 AND s.is_spam = $3
    AND s.created_at < (SELECT CASE WHEN $3 THEN kept_spam.spam ELSE kept.inbox END
                          FROM forms f ${CUTOFFS} WHERE f.id = $2)
  ORDER BY s.created_at, s.id
  LIMIT $4`;

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
    `WITH doomed AS (${EXPIRED_BATCH} FOR UPDATE SKIP LOCKED),
     gone AS (DELETE FROM submissions WHERE id IN (SELECT id FROM doomed) RETURNING 1)
     SELECT count(*)::int AS deleted FROM gone`,
    [now, formId, isSpam, limit],
  );
  return rows[0]?.deleted ?? 0;
}
