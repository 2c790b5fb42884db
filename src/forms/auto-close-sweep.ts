import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/database.ts";
import { closeDueForms } from "./forms.repository.ts";

/**
 * Reads already count a passed deadline as closed; this pass writes it down, so the stored
 * switch agrees with what clients see and the deadline index stays small.
 */
export function startAutoCloseSweep(db: Queryable, intervalMs: number, log: FastifyBaseLogger) {
  let running: Promise<void> | null = null;
  const sweep = async () => {
    try {
      const closed = await closeDueForms(db, new Date());
      if (closed > 0) log.info({ closed }, "auto-close: closed forms whose deadline passed");
    } catch (error) {
      log.warn({ err: error }, "auto-close: sweep failed; it runs again at the next interval");
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => {
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
