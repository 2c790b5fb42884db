import { spawn } from "node:child_process";
import { access } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Database, NotificationHandlers, QueryOptions } from "./database.ts";
import type { ThreadReply, ThreadRequest } from "./pglite-protocol.ts";
import { startWorkerWithHeapFlags } from "./worker-heap-flags.ts";

/**
 * PGlite sends a Date as `toISOString()`, which writes a year past 9999 as `+010000`, a form
 * PostgreSQL refuses; without the sign and the padding it reads it.
 */
const asPgliteParameter = (value: unknown) =>
  value instanceof Date ? value.toISOString().replace(/^\+0*/, "") : value;

type Request = ThreadRequest extends infer R
  ? R extends ThreadRequest
    ? Omit<R, "id">
    : never
  : never;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/** SQLSTATE query_canceled, as PostgreSQL's statement_timeout answers. */
const timedOut = (ms: number) =>
  Object.assign(new Error(`statement: the embedded store did not answer within ${ms} ms`), {
    code: "57014",
  });

/** The Node arguments of the process that creates a new store in `dataDir`. */
export const storeCreationArgs = (dataDir: string) => [
  "--liftoff-only",
  fileURLToPath(new URL("./pglite-initdb.ts", import.meta.url)),
  dataDir,
];

/**
 * Creates a new store in `dataDir` in a process of its own. PGlite's initdb runs a second
 * PostgreSQL beside the first, writes the new cluster in memory and copies it to the directory as
 * a tar archive: about 300 MB more than the store it leaves, which a process that did it kept
 * resident for as long as it lived (530 MB against 240 MB for the same store opened again). The
 * process flag is the one `npm start` gives the server for the same reason (decisions.md, "The
 * embedded store's memory").
 */
async function createPgliteStore(dataDir: string) {
  const child = spawn(process.execPath, storeCreationArgs(dataDir), {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr = (stderr + text).slice(-2_000);
  });
  // A process that could not be started reports an error and may never close.
  const ending = await new Promise<string | null>((resolve) => {
    child.once("error", (error) => resolve(`not started: ${error.message}`));
    child.once("close", (code, signal) =>
      resolve(code === 0 ? null : (signal ?? `exit code ${code}`)),
    );
  });
  if (ending !== null) {
    throw new Error(
      `the embedded store in ${dataDir} could not be created (${ending}): ${stderr.trim()}`,
    );
  }
}

const storeExists = (dataDir: string) =>
  access(path.join(dataDir, "PG_VERSION")).then(
    () => true,
    () => false,
  );

/**
 * The store's thread keeps little alive from one statement to the next: its rows and parameters
 * are passed on and dropped. Semi-spaces of 1 MB instead of the process's (4 MB with npm start)
 * kept 20 to 30 MB less resident through the embedded bench's loads (docs/decisions.md).
 */
const STORE_THREAD_SEMI_SPACE_MB = 1;

/**
 * The embedded store, run on a thread of its own (pglite-thread.ts) behind the `Database`
 * interface. PGlite cannot cancel a statement (it does not honour statement_timeout: its WASM
 * runs without signals), so a statement not answered within `statementTimeoutMs` fails here
 * with query_canceled while the store finishes it; the work it may take is bounded by the queries.
 */
export async function openPgliteThread(
  dataDir: string | null,
  statementTimeoutMs: number,
): Promise<Database> {
  if (dataDir && !(await storeExists(dataDir))) await createPgliteStore(dataDir);
  // The thread collects its young generation itself after a statement that carried bytes.
  const worker = startWorkerWithHeapFlags(
    new URL("./pglite-thread.ts", import.meta.url),
    { semiSpaceMb: STORE_THREAD_SEMI_SPACE_MB, exposeGc: true },
    { workerData: { dataDir } },
  );
  const pending = new Map<number, Pending>();
  const listeners = new Map<number, NotificationHandlers>();
  let nextId = 1;
  let closed: Error | null = null;

  // The thread keeps the process alive only while a request waits for it, as a socket would.
  const holdProcess = () => (pending.size > 0 ? worker.ref() : worker.unref());
  holdProcess();

  const settle = (id: number) => {
    const entry = pending.get(id);
    if (!entry) return undefined;
    pending.delete(id);
    clearTimeout(entry.timer);
    holdProcess();
    return entry;
  };

  function call<T>(request: Request, timeoutMs?: number): Promise<T> {
    if (closed) return Promise.reject(closed);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = timeoutMs
        ? setTimeout(() => settle(id)?.reject(timedOut(timeoutMs)), timeoutMs)
        : undefined;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      holdProcess();
      worker.postMessage({ ...request, id });
    });
  }

  const stop = (reason: string) => {
    closed ??= new Error(`PGlite is closed: ${reason}`);
    for (const id of [...pending.keys()]) settle(id)?.reject(closed);
  };

  worker.on("message", (reply: ThreadReply) => {
    if ("listener" in reply) {
      listeners.get(reply.listener)?.message(reply.payload);
      return;
    }
    const entry = settle(reply.id);
    if (!entry) return;
    if ("error" in reply) entry.reject(Object.assign(new Error(reply.error.message), reply.error));
    else entry.resolve(reply.result);
  });
  worker.on("error", (error) => stop(`its thread failed: ${error.message}`));
  worker.on("exit", () => stop("its thread exited"));

  try {
    await call({ op: "open" });
  } catch (error) {
    await worker.terminate();
    throw error;
  }

  const query = <Row>(
    sql: string,
    params: readonly unknown[] | undefined,
    transaction: number | null,
    options?: QueryOptions,
  ) =>
    call<Row[]>(
      {
        op: "query",
        sql,
        params: params?.map(asPgliteParameter),
        transaction,
        script: options?.script,
      },
      options?.unbounded ? undefined : statementTimeoutMs,
    );

  return {
    kind: "pglite",
    query: (sql, params, options) => query(sql, params, null, options),
    // PGlite's driver has no COPY to the client; its text path is in the same process anyway.
    copyBinary: null,
    async transaction(work) {
      // BEGIN and its end are not timed: a transaction opened after its caller gave up would
      // hold the store for good.
      const transaction = await call<number>({ op: "begin" });
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work({
          kind: "pglite",
          query: (sql, params, options) => query(sql, params, transaction, options),
        });
      } catch (error) {
        await call({ op: "end", transaction, commit: false }).catch(() => {});
        throw error;
      }
      await call({ op: "end", transaction, commit: true });
      return result;
    },
    listen(channel, handlers) {
      // One process owns an embedded store, so its listener is never cut off.
      // The id that call() is about to give the listen request names its notifications.
      const id = nextId;
      listeners.set(id, handlers);
      const listening = call({ op: "listen", channel }).then(
        () => handlers.connected(),
        // A closed store: nothing to listen to, and never `connected`.
        () => listeners.delete(id),
      );
      return async () => {
        await listening;
        listeners.delete(id);
        // Closing the store has already ended every listener.
        if (!closed) await call({ op: "unlisten", listener: id });
      };
    },
    async close() {
      if (closed) return;
      try {
        await call({ op: "close" });
      } finally {
        stop("it was closed");
        await worker.terminate();
      }
    },
  };
}
