import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { storeCreationArgs } from "../src/db/pglite-store.ts";
import { highWaterMb } from "./servers.ts";

/**
 * The process that a server started on a new DATA_DIR runs to create its store
 * (src/db/pglite-initdb.ts), run alone on a new directory: its seconds, and its peak RSS as last
 * read (every 10 ms) before it exited.
 */
export async function measureStoreCreation(): Promise<{ peakRssMb: number; seconds: number }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-bench-creation-"));
  try {
    const started = performance.now();
    const child = spawn(process.execPath, storeCreationArgs(dataDir), { stdio: "inherit" });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    let done = false;
    void exited.then(() => {
      done = true;
    });
    let peakRssMb = 0;
    while (!done) {
      peakRssMb = Math.max(peakRssMb, (await highWaterMb(child.pid as number)) ?? 0);
      await sleep(10);
    }
    const code = await exited;
    if (code !== 0) throw new Error(`store creation exited with ${code}`);
    return { peakRssMb, seconds: (performance.now() - started) / 1000 };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
