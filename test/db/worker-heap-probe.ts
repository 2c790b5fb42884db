// Starts a worker through startWorkerWithHeapFlags with semi-spaces of 1 MB and V8's gc, lets it
// and this thread make short-lived garbage until their young generations have grown, has the
// worker free 20 MB of dead buffers with a collection, then prints both young generations'
// sizes in MB and which thread has a gc function, as JSON: for worker-heap-flags.test.ts, which
// runs it with the process flag that npm start gives.
import v8 from "node:v8";
import vm from "node:vm";
import { startWorkerWithHeapFlags } from "../../src/db/worker-heap-flags.ts";

function youngGenerationMb() {
  let kept: object[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    kept.push({ i });
    if (kept.length > 100_000) kept = [];
  }
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return (space?.space_size ?? 0) / 1024 / 1024;
}

/**
 * MB of dead buffers a collection leaves, of 20 MB made. It is a major one: a minor one mostly
 * frees them too, but not when V8 has started marking on its own meanwhile (seen about one run in
 * six). V8 frees their bytes after it, on a background thread that a loaded machine may run late:
 * this waits up to 5 s for them to go. Without `gc` nothing here frees them.
 */
async function buffersLeftMb() {
  const arrayBufferMb = () => process.memoryUsage().arrayBuffers / 1024 / 1024;
  const before = arrayBufferMb();
  for (let i = 0; i < 20; i++) new Uint8Array(1024 * 1024).fill(i);
  await new Promise((resolve) => setImmediate(resolve));
  (globalThis as unknown as { gc(options: object): void }).gc({ type: "major", execution: "sync" });
  const deadline = Date.now() + 5000;
  while (arrayBufferMb() - before >= 0.5 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Math.round(arrayBufferMb() - before);
}

// The worker runs the same functions, as source: its module is a data: URL.
const churn = `import v8 from "node:v8";
import { parentPort } from "node:worker_threads";
${String(youngGenerationMb)}
${String(buffersLeftMb)}
parentPort.postMessage({ youngMb: youngGenerationMb(), buffersLeftMb: await buffersLeftMb() });`;
const worker = startWorkerWithHeapFlags(
  new URL(`data:text/javascript,${encodeURIComponent(churn)}`),
  { semiSpaceMb: 1, exposeGc: true },
  {},
);
const { youngMb, buffersLeftMb: workerBuffersLeftMb } = await new Promise<{
  youngMb: number;
  buffersLeftMb: number;
}>((resolve) => worker.once("message", resolve));
await worker.terminate();
process.stdout.write(
  JSON.stringify({
    workerMb: youngMb,
    workerBuffersLeftMb,
    mainMb: youngGenerationMb(),
    mainGc: typeof (globalThis as { gc?: unknown }).gc,
    newContextGc: vm.runInNewContext("typeof gc"),
  }),
);
