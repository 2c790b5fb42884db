import type { Queryable } from "../db/database.ts";
import { deleteExpiredBatch, formsWithExpiredSubmissions } from "./retention.repository.ts";

export interface RetentionOptions {
  /** Rows per DELETE statement, each its own transaction. */
  batchSize?: number;
  /** Asked between batches: a pass stops early when the process shuts down. */
  stopping?: () => boolean;
}

const FORMS_PER_QUERY = 100;

/**
 * One retention pass: deletes the submissions older than their form's storage duration, and
 * spam older than 30 days, a batch at a time. Safe with passes of other instances running at
 * once: each skips the rows another has locked. Returns how many it deleted.
 */
export async function deleteExpiredSubmissions(
  db: Queryable,
  now: Date,
  { batchSize = 1_000, stopping = () => false }: RetentionOptions = {},
): Promise<number> {
  let deleted = 0;
  let afterId = "";
  for (;;) {
    const formIds = await formsWithExpiredSubmissions(db, now, afterId, FORMS_PER_QUERY);
    for (const formId of formIds) {
      for (const isSpam of [true, false]) {
        let removed: number;
        do {
          if (stopping()) return deleted;
          removed = await deleteExpiredBatch(db, now, formId, isSpam, batchSize);
          deleted += removed;
        } while (removed === batchSize);
      }
    }
    const last = formIds.at(-1);
    if (!last || formIds.length < FORMS_PER_QUERY) return deleted;
    afterId = last;
  }
}
