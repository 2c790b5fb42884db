import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/database.ts";
import { foldSubmissionCounts } from "./submission-counts.repository.ts";

/** Forms folded per statement: a short transaction, however many forms received submissions. */
const BATCH = 500;

/**
 * Reads already add the slots to forms.submissions; this pass folds them in, so that the
 * sort=submissions index orders forms by their count and the slot table stays small.
 */
export function startSubmissionCountFold(
  db: Queryable,
  intervalMs: number,
  log: FastifyBaseLogger,
) {
  let running: Promise<void> | null = null;
  const fold = async () => {
    try {
      while ((await foldSubmissionCounts(db, BATCH)) === BATCH) {}
    } catch (error) {
      log.warn(
        { err: error },
        "submission counts: fold failed; it runs again at the next interval",
      );
    }
  };
  const timer = setInterval(() => {
    running ??= fold().finally(() => {
      running = null;
    });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
