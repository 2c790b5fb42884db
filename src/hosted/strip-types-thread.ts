import { Worker } from "node:worker_threads";

/**
 * The thread's code: JavaScript, so that starting it strips no types itself. Its
 * `process` is its own: silencing the one-time "experimental" warning there keeps the server's
 * output to its JSON log lines and leaves the main thread's warnings alone.
 */
const STRIP_TYPES = `
import { stripTypeScriptTypes } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
process.emitWarning = () => {};
parentPort.postMessage(stripTypeScriptTypes(workerData));
`;

/**
 * `source`, a TypeScript module, with its types stripped by Node's own stripper, run on a thread
 * that ends once it has answered. The stripper is a WebAssembly build of a compiler that stays
 * loaded in the thread that used it: about 12 MB of resident memory that the server, whose own
 * modules come stripped from Node's compile cache (docs/decisions.md, "Memory"), never needs
 * otherwise.
 */
export function stripTypesInThread(source: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(STRIP_TYPES, { eval: true, workerData: source });
    worker.once("message", (stripped: string) => resolve(stripped));
    worker.once("error", reject);
    worker.once("exit", (code) =>
      reject(new Error(`type stripping: its thread exited (code ${code}) without an answer`)),
    );
  });
}
