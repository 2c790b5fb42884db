// Starts a worker through startWorkerWithSemiSpace with semi-spaces of 1 MB, lets it and this
// thread make short-lived garbage until their young generations have grown, then prints both
// young generations' sizes in MB as JSON: for worker-young-generation.test.ts, which runs it
// with the process flag that npm start gives.
import v8 from "node:v8";
import { startWorkerWithSemiSpace } from "../../src/db/worker-young-generation.ts";

function youngGenerationMb() {
  let kept: object[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    kept.push({ i });
    if (kept.length > 100_000) kept = [];
  }
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return (space?.space_size ?? 0) / 1024 / 1024;
}

// The worker runs the same function, as source: its module is a data: URL.
const churn = `import v8 from "node:v8";
import { parentPort } from "node:worker_threads";
${String(youngGenerationMb)}
parentPort.postMessage(youngGenerationMb());`;
const worker = startWorkerWithSemiSpace(
  new URL(`data:text/javascript,${encodeURIComponent(churn)}`),
  1,
  {},
);
const workerMb = await new Promise((resolve) => worker.once("message", resolve));
await worker.terminate();
process.stdout.write(JSON.stringify({ workerMb, mainMb: youngGenerationMb() }));
