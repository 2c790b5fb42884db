import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/database.ts";
import { deleteExpiredSubmissions } from "./retention.ts";

/**
 * Runs a retention pass at start and then every `intervalMs`; one at a time in this process,
 * any number across instances. A pass stops between two batches when the sweep is stopped.
 */
export function startRetentionSweep(db: Queryable, intervalMs: number, log: FastifyBaseLogger) {
  let running: Promise<void> | null = null;
  let stopped = false;
  const sweep = async () => {
    try {
      const deleted = await deleteExpiredSubmissions(db, new Date(), { stopping: () => stopped });
      if (deleted > 0) log.info({ deleted }, "retention: deleted expired submissions");
    } catch (error) {
      log.warn({ err: error }, "retention: pass failed; it runs again at the next interval");
    }
  };
  const run = () => {
    running ??= sweep().finally(() => {
      running = null;
    });
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  // Instances that restart more often than the interval must still sweep.
  const first = setTimeout(run, 0);
  first.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}
