import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/database.ts";
import { startBackgroundPass } from "../jobs/background-pass.ts";
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
  return startBackgroundPass({
    name: "submission counts",
    intervalMs,
    log,
    async run() {
      while ((await foldSubmissionCounts(db, BATCH)) === BATCH) {}
    },
  });
}
