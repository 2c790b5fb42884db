import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/database.ts";
import { startBackgroundPass } from "../jobs/background-pass.ts";
import { closeDueForms } from "./forms.repository.ts";

/**
 * Reads already count a passed deadline as closed; this pass writes it down, so the stored
 * switch agrees with what clients see and the deadline index stays small.
 */
export function startAutoCloseSweep(db: Queryable, intervalMs: number, log: FastifyBaseLogger) {
  return startBackgroundPass({
    name: "auto-close",
    intervalMs,
    log,
    async run() {
      const closed = await closeDueForms(db, new Date());
      if (closed > 0) log.info({ closed }, "auto-close: closed forms whose deadline passed");
    },
  });
}
