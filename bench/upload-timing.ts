/** The uploads scenarios' clients: calls timed one by one, and lists timed during a burst. */
import { spawn } from "node:child_process";
import { projectRoot } from "./child-processes.ts";

export const percentile = (values: readonly number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

/** Calls `call`, `connections` at a time, while `goOn()` holds: each call's milliseconds. */
async function timedWhile(connections: number, call: () => Promise<unknown>, goOn: () => boolean) {
  const times: number[] = [];
  const worker = async () => {
    while (goOn()) {
      const started = performance.now();
      await call();
      times.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return times;
}

/** Runs `total` calls of `call`, `connections` at a time: each call's milliseconds, and the seconds. */
export async function timedCalls(total: number, connections: number, call: () => Promise<unknown>) {
  let next = 0;
  const started = performance.now();
  const times = await timedWhile(connections, call, () => next++ < total);
  return { times, seconds: (performance.now() - started) / 1000 };
}

/**
 * Calls `call`, `connections` at a time, for `seconds`: each call's milliseconds. The idle side of
 * a comparison with a burst lasting seconds: a window as long catches the machine's periodic
 * hiccups (a checkpoint, a collection) as the burst's window does, which 400 calls in half a
 * second mostly missed.
 */
export function timedFor(seconds: number, connections: number, call: () => Promise<unknown>) {
  const until = performance.now() + seconds * 1000;
  return timedWhile(connections, call, () => performance.now() < until);
}

/**
 * 50 clients upload a 10 MB file each to the form at once, from a process of its own
 * (bench/upload-burst.ts) so that sending 500 MB never stalls the process timing other requests;
 * `during`, when given, is called 5 at a time from the burst's first request to its last answer,
 * each call timed. Resolves to the burst's statuses and those times.
 */
export async function uploadBurst(origin: string, formId: string, during?: () => Promise<unknown>) {
  const burst = spawn(process.execPath, ["bench/upload-burst.ts", origin, formId], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const started = new Promise<void>((resolve) =>
    burst.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("sending\n")) resolve();
    }),
  );
  let over = false;
  const ended = new Promise<void>((resolve) =>
    burst.on("close", () => {
      over = true;
      resolve();
    }),
  );
  await started;
  const times = during ? await timedWhile(5, during, () => !over) : [];
  await ended;
  const statuses = JSON.parse(output.slice(output.indexOf("\n") + 1)) as Record<string, number>;
  return { times, stored: statuses["201"] ?? 0, refused: statuses["503"] ?? 0, statuses };
}
