import type { FastifyBaseLogger } from "fastify";

export interface BackgroundPass {
  /** Ends the timer and waits for a run still in progress. */
  stop(): Promise<void>;
}

export interface BackgroundPassOptions {
  /** Names the pass in its log lines (`retention`, `auto-close`). */
  name: string;
  intervalMs: number;
  log: FastifyBaseLogger;
  /** Also run once right away: for passes that instances restarting often must still make. */
  runAtStart?: boolean;
  /** One run; `stopping()` turns true once the pass is stopped, for a run to end between batches. */
  run: (stopping: () => boolean) => Promise<void>;
}

/**
 * Runs a pass every `intervalMs`, one run at a time in this process (a run still going when the
 * next is due is not doubled); any number of instances may run it at once. A run that fails is
 * logged and tried again at the next interval. The timers never keep the process alive.
 */
export function startBackgroundPass(options: BackgroundPassOptions): BackgroundPass {
  const { name, intervalMs, log, run } = options;
  let running: Promise<void> | null = null;
  let stopped = false;
  const once = async () => {
    try {
      await run(() => stopped);
    } catch (error) {
      log.warn({ err: error }, `${name}: pass failed; it runs again at the next interval`);
    }
  };
  const start = () => {
    running ??= once().finally(() => {
      running = null;
    });
  };
  const timer = setInterval(start, intervalMs);
  timer.unref();
  const first = options.runAtStart ? setTimeout(start, 0) : null;
  first?.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (first) clearTimeout(first);
      await running;
    },
  };
}
