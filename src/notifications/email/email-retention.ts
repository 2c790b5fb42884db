import type { Queryable } from "../../db/database.ts";
import { deleteUnstoredEmailRecords } from "./email-records.repository.ts";

/**
 * The records of a submission that was never stored (`never`) have no submission to go with and
 * no route to read them: each is kept while it may still be sent, and for the hour in which it
 * counts towards the autoresponder's cap, then deleted by the retention pass.
 */
export const UNSTORED_RECORD_KEPT_MS = 3_600_000;

export async function deleteExpiredUnstoredEmails(
  db: Queryable,
  now: Date,
  stopping: () => boolean,
  batchSize = 1_000,
): Promise<number> {
  const before = new Date(now.getTime() - UNSTORED_RECORD_KEPT_MS);
  let deleted = 0;
  let removed: number;
  do {
    if (stopping()) return deleted;
    removed = await deleteUnstoredEmailRecords(db, before, batchSize);
    deleted += removed;
  } while (removed === batchSize);
  return deleted;
}
