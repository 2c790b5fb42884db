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

/** V8's `gc`, as a context made while `--expose-gc` is set has it. */
export type Collect = (options: { type: "minor" | "major"; execution: "sync" | "async" }) => void;

/**
 * Starts a worker thread whose young generation's semi-spaces are at most `semiSpaceMb` and, with
 * `exposeGc`, whose global scope has V8's `gc`. Node's `resourceLimits.maxYoungGenerationSizeMb`
 * cannot do the first: V8 applies the process's `--max-semi-space-size` (which `npm start` gives)
 * over it; and a worker takes no V8 flags of its own. V8 reads both flags when a thread's heap and
 * context are made, so they are set for the new thread and put back once that thread runs, from
 * this thread: V8's flags are the process's, and no other thread writes them. Heaps and contexts
 * made before keep what they had.
 */
export function startWorkerWithHeapFlags(
  url: URL,
  flags: { semiSpaceMb: number; exposeGc: boolean },
  options: WorkerOptions,
): Worker {
  v8.setFlagsFromString(`--max-semi-space-size=${flags.semiSpaceMb}`);
  if (flags.exposeGc) v8.setFlagsFromString("--expose-gc");
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    v8.setFlagsFromString(`--max-semi-space-size=${processSemiSpaceMb()}`);
    if (flags.exposeGc) v8.setFlagsFromString("--no-expose-gc");
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
