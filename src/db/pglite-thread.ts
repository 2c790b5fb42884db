// The embedded store's own thread: PGlite runs its statements synchronously, so on the main thread
// one long statement would stop every request (even /healthz) until it ends. Here it stops only the
// statements behind it. Requests come from pglite-store.ts; every answer names the request's id.
import { mkdir } from "node:fs/promises";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { PGLITE_OPTIONS } from "./pglite-options.ts";
import type { ThreadReply, ThreadRequest } from "./pglite-protocol.ts";
import type { Collect } from "./worker-heap-flags.ts";

const port = parentPort;
if (!port) throw new Error("pglite-thread.ts runs as a worker thread");
const { dataDir } = workerData as { dataDir: string | null };

/** What a statement's error says, as plain data: an Error's own fields do not cross threads. */
function describe(error: unknown) {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(error)) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
      fields[name] = value;
    }
  }
  return { ...fields, message: error.message };
}

const send = (reply: ThreadReply) => port.postMessage(reply);
const answer = (id: number, work: () => Promise<unknown>) =>
  work().then(
    (result) => send({ id, result }),
    (error: unknown) => send({ id, error: describe(error) }),
  );

/**
 * PGlite has no autovacuum. Without VACUUM no page is ever marked all-visible, so index-only
 * scans read the table anyway: a page 200,000 forms deep took 1.5 to 1.8 s instead of 50 to
 * 400 ms. A VACUUM with nothing to do takes a few milliseconds.
 */
const VACUUM_EVERY_MS = 60_000;
let vacuuming: NodeJS.Timeout | undefined;

/**
 * Nor autoanalyze: a store filled after its first start kept the statistics of its empty tables,
 * and the planner, taking an organization's forms for a handful, searched 10,000 forms by reading
 * every row (117 ms a search instead of 2). As autovacuum would, the tables are analyzed again
 * once the statements that wrote since the last pass reach 50 plus a tenth of their rows.
 */
let writesSinceAnalyze = 0;
let rowsAtAnalyze = 0;
let analyzing = false;

async function vacuum(analyze = false) {
  try {
    if (!analyze) {
      await db.query("VACUUM");
      return;
    }
    writesSinceAnalyze = 0;
    await db.query("VACUUM ANALYZE");
    const [counted] = (
      await db.query<{ rows: number }>(
        `SELECT COALESCE(sum(reltuples), 0)::float8 AS rows FROM pg_class
          WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`,
      )
    ).rows;
    rowsAtAnalyze = Math.max(0, counted?.rows ?? 0);
  } catch {
    // A closed store, or one in trouble: its next statement reports it.
  }
}

function countWrite(sql: string) {
  if (/^\s*SELECT\b/i.test(sql)) return;
  writesSinceAnalyze++;
  if (analyzing || writesSinceAnalyze < 50 + rowsAtAnalyze / 10) return;
  analyzing = true;
  void vacuum(true).finally(() => {
    analyzing = false;
  });
}

// pglite-store.ts starts this thread with V8's `gc` in its global scope.
const collect = (globalThis as unknown as { gc: Collect }).gc;
let collecting = false;

/**
 * A statement's bytes (a file's slice) leave garbage of their size several times over: the copy
 * that crossed from the main thread, and PGlite's copies as it builds the protocol message. Their
 * memory is outside V8's heap, which V8 collects only once 64 MB of it have piled up, so a burst
 * of uploads held that much dead; a young-generation collection after such a statement frees it
 * for a millisecond or so (not while V8 is marking the whole heap on its own: that frees it later).
 */
function collectBytesSoon() {
  if (collecting) return;
  collecting = true;
  setImmediate(() => {
    collecting = false;
    collect({ type: "minor", execution: "sync" });
  });
}

let db: PGlite;
const opened = (async () => {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  db = await PGlite.create(dataDir ?? undefined, PGLITE_OPTIONS);
  await vacuum();
  vacuuming = setInterval(() => void vacuum(), VACUUM_EVERY_MS).unref();
})();

/** Open transactions, each waiting for its COMMIT (true) or ROLLBACK (false). */
const transactions = new Map<number, { tx: Transaction; end(commit: boolean): void }>();
const listeners = new Map<number, Promise<() => Promise<void>>>();
let nextTransaction = 1;

const ROLLBACK = Symbol("rollback");

/** Opens a transaction and answers with its id; it stays open until `end` decides. */
function begin(): Promise<number> {
  const id = nextTransaction++;
  const started = Promise.withResolvers<number>();
  const decided = Promise.withResolvers<boolean>();
  let began = false;
  const finished = db
    .transaction(async (tx) => {
      began = true;
      transactions.set(id, { tx, end: decided.resolve });
      started.resolve(id);
      if (!(await decided.promise)) throw ROLLBACK;
    })
    .then(
      () => {},
      (error: unknown) => {
        if (error !== ROLLBACK) throw error;
      },
    );
  endings.set(id, finished);
  // A transaction that could not start fails its BEGIN; one that fails later, its COMMIT.
  finished.catch((error: unknown) => {
    if (began) return;
    endings.delete(id);
    started.reject(error);
  });
  return started.promise;
}

/**
 * Runs a script of several statements, the rows of all of them in order. One outside a
 * transaction of ours may open its own (`BEGIN; ... COMMIT;`): a statement failing in it would
 * leave the single connection in an aborted transaction, so it is rolled back here, as a pool
 * would drop the connection.
 */
async function runScript(target: PGlite | Transaction, sql: string, standalone: boolean) {
  try {
    return (await target.exec(sql)).flatMap((result) => result.rows ?? []);
  } catch (error) {
    if (standalone) await db.exec("ROLLBACK").catch(() => {});
    throw error;
  }
}

/** Per transaction: settles when its COMMIT or ROLLBACK has run. */
const endings = new Map<number, Promise<void>>();

async function end(id: number, commit: boolean) {
  const open = transactions.get(id);
  if (!open) throw new Error(`no open transaction ${id}`);
  transactions.delete(id);
  open.end(commit);
  try {
    await endings.get(id);
  } finally {
    endings.delete(id);
  }
}

port.on("message", (request: ThreadRequest) => {
  const { id } = request;
  switch (request.op) {
    case "open":
      return answer(id, () => opened);
    case "query":
      return answer(id, async () => {
        const target = request.transaction ? transactions.get(request.transaction)?.tx : db;
        if (!target) throw new Error(`no open transaction ${request.transaction}`);
        if (request.script) return runScript(target, request.sql, !request.transaction);
        const { rows } = await target.query(request.sql, request.params);
        countWrite(request.sql);
        if (request.params?.some((value) => value instanceof Uint8Array)) collectBytesSoon();
        return rows;
      });
    case "begin":
      return answer(id, begin);
    case "end":
      return answer(id, () => end(request.transaction, request.commit));
    case "listen":
      return answer(id, async () => {
        const unlisten = db.listen(request.channel, (payload) => send({ listener: id, payload }));
        listeners.set(id, unlisten);
        await unlisten;
      });
    case "unlisten":
      return answer(id, async () => {
        const unlisten = listeners.get(request.listener);
        listeners.delete(request.listener);
        if (unlisten && !db.closed) await (await unlisten)();
      });
    case "close":
      clearInterval(vacuuming);
      return answer(id, () => db.close());
  }
});
