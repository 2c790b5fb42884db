import v8 from "node:v8";
import { Worker, type WorkerOptions } from "node:worker_threads";

const SEMI_SPACE_FLAG = /^--max-semi-space-size=(\d+)$/;

/**
 * The `--max-semi-space-size` this process was started with (NODE_OPTIONS, then its own flags:
 * the last one counts), "0" without one: V8 then sizes the young generation itself.
 */
export function processSemiSpaceMb(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string {
  let value = "0";
  for (const flag of [...nodeOptions.split(/\s+/), ...execArgv]) {
    value = SEMI_SPACE_FLAG.exec(flag)?.[1] ?? value;
  }
  return value;
}

/**
 * Starts a worker thread whose young generation's semi-spaces are at most `semiSpaceMb`. Node's
 * `resourceLimits.maxYoungGenerationSizeMb` cannot: V8 applies the process's
 * `--max-semi-space-size` (which `npm start` gives) over it. V8 reads the flag when a thread's heap
 * is made, so the flag is set for the new thread and put back once that thread runs. Heaps made
 * before keep their size, this thread's included.
 */
export function startWorkerWithSemiSpace(
  url: URL,
  semiSpaceMb: number,
  options: WorkerOptions,
): Worker {
  v8.setFlagsFromString(`--max-semi-space-size=${semiSpaceMb}`);
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    v8.setFlagsFromString(`--max-semi-space-size=${processSemiSpaceMb()}`);
  };
  try {
    const worker = new Worker(url, options);
    worker.once("online", restore);
    worker.once("exit", restore);
    return worker;
  } catch (error) {
    restore();
    throw error;
  }
}
