import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/database.ts";
import { startBackgroundPass } from "../jobs/background-pass.ts";
import { deleteExpiredUnstoredEmails } from "../notifications/email/email-retention.ts";
import { deleteExpiredSubmissions } from "./retention.ts";

/**
 * Runs a retention pass at start (instances that restart more often than the interval must still
 * sweep) and then every `intervalMs`. A pass stops between two batches when the sweep is stopped.
 */
export function startRetentionSweep(db: Queryable, intervalMs: number, log: FastifyBaseLogger) {
  return startBackgroundPass({
    name: "retention",
    intervalMs,
    log,
    runAtStart: true,
    async run(stopping) {
      const deleted = await deleteExpiredSubmissions(db, new Date(), { stopping });
      if (deleted > 0) log.info({ deleted }, "retention: deleted expired submissions");
      const emails = await deleteExpiredUnstoredEmails(db, new Date(), stopping);
      if (emails > 0)
        log.info({ emails }, "retention: deleted email records of unstored submissions");
    },
  });
}
