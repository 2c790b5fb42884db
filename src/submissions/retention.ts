import type { Queryable } from "../db/database.ts";
import { deleteExpiredBatch, scanForExpiredSubmissions } from "./retention.repository.ts";

export interface RetentionOptions {
  /** Rows per DELETE statement, each its own transaction. */
  batchSize?: number;
  /** Forms looked at per statement of the scan. */
  formsPerScan?: number;
  /** Asked between batches: a pass stops early when the process shuts down. */
  stopping?: () => boolean;
}

/**
 * One retention pass: deletes the submissions older than their form's storage duration, and
 * spam older than 30 days, a batch at a time. Safe with passes of other instances running at
 * once: each skips the rows another has locked. Returns how many it deleted.
 */
export async function deleteExpiredSubmissions(
  db: Queryable,
  now: Date,
  { batchSize = 1_000, formsPerScan = 1_000, stopping = () => false }: RetentionOptions = {},
): Promise<number> {
  let deleted = 0;
  let afterId = "";
  for (;;) {
    const scanned = await scanForExpiredSubmissions(db, now, afterId, formsPerScan);
    const formIds = scanned.filter((form) => form.expired).map((form) => form.id);
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
    const last = scanned.at(-1);
    if (!last || scanned.length < formsPerScan) return deleted;
    afterId = last.id;
  }
}
