import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import pg from "pg";

export interface QueryOptions {
  /**
   * Plan the statement for its parameters on every run, never once for all: for a statement
   * whose best plan depends on a parameter's value, such as a LIKE pattern.
   */
  planEachTime?: boolean;
}

/** Anything that runs parameterized SQL: the database itself or one of its transactions. */
export interface Queryable {
  query<Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
}

export interface NotificationHandlers {
  message(payload: string): void;
  /** Listening: from now on every notification arrives. */
  connected(): void;
  /** Not listening, until `connected` again: notifications sent meanwhile are lost. */
  disconnected(): void;
}

export interface Database extends Queryable {
  readonly kind: "pglite" | "postgres";
  /** Delivers what NOTIFY sends on `channel`; the returned function stops listening. */
  listen(channel: string, handlers: NotificationHandlers): () => Promise<void>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  /** PGlite data directory; `null` for an in-memory store. */
  dataDir: string | null;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

/**
 * PGlite sends a Date as `toISOString()`, which writes a year past 9999 as `+010000`, a form
 * PostgreSQL refuses; without the sign and the padding it reads it.
 */
const asPgliteParameter = (value: unknown) =>
  value instanceof Date ? value.toISOString().replace(/^\+0*/, "") : value;

/**
 * PGlite's memory settings, to apply wherever PGlite is created (docs/performance.md, "Memory").
 * Its default 128 MB of shared buffers cost about 120 MB of resident memory once the store is
 * used; an embedded store is small and the operating system caches its files anyway: 16 MB. At
 * the first start on a new DATA_DIR, PGlite's initdb runs a second PostgreSQL in the process,
 * writing the new cluster into memory before copying it to DATA_DIR: the same shared buffers, and
 * WAL segments of 1 MB instead of 16, take that moment's peak about 100 MB lower.
 */
export const PGLITE_MEMORY = {
  startParams: [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"],
  initDbStartParams: ["-c", "shared_buffers=16MB", "--wal-segsize=1"],
};

async function openPglite(dataDir: string | null): Promise<Database> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir ?? undefined, {
    extensions: { pg_trgm },
    ...PGLITE_MEMORY,
  });
  const run = async <Row>(q: Pick<PGlite, "query">, sql: string, params?: readonly unknown[]) =>
    (await q.query<Row>(sql, params?.map(asPgliteParameter))).rows;
  return {
    kind: "pglite",
    query: (sql, params) => run(db, sql, params),
    transaction: (work) => db.transaction((tx) => work({ query: (sql, p) => run(tx, sql, p) })),
    listen(channel, handlers) {
      // One process owns an embedded store, so its listener is never cut off.
      const stop = db.listen(channel, handlers.message).then(
        (unlisten) => {
          handlers.connected();
          return unlisten;
        },
        // A closed store: nothing to listen to, and never `connected`.
        () => async () => {},
      );
      return async () => {
        const unlisten = await stop;
        // Closing the store has already ended every listener.
        if (!db.closed) await unlisten();
      };
    },
    close: () => db.close(),
  };
}

async function openPostgres(connectionString: string): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 5_000,
    // A statement that hangs (a dead server, a lock) must not hold a request forever.
    query_timeout: 10_000,
  });
  // An idle client losing its connection (a server restart) must not crash the process.
  pool.on("error", () => {});
  // Every statement is prepared once per connection and then only bound and executed. The set
  // of statements is fixed (no SQL is built from input), so their names are few.
  const names = new Map<string, string>();
  const nameOf = (sql: string) => {
    let name = names.get(sql);
    if (!name) {
      name = `formdeck_${names.size}`;
      names.set(sql, name);
    }
    return name;
  };
  const run = async <Row>(
    q: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ) => {
    // An unnamed statement is planned with the values it is given.
    const name = options?.planEachTime ? undefined : nameOf(sql);
    return (await q.query({ name, text: sql, values: params as unknown[] })).rows as Row[];
  };
  return {
    kind: "postgres",
    query: (sql, params, options) => run(pool, sql, params, options),
    async transaction(work) {
      const client = await pool.connect();
      // A connection whose ROLLBACK failed is in an unknown state: it is destroyed, not reused.
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const result = await work({ query: (sql, p, options) => run(client, sql, p, options) });
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw error;
      } finally {
        client.release(broken);
      }
    },
    listen: (channel, handlers) => listenWithReconnect(connectionString, channel, handlers),
    close: () => pool.end(),
  };
}

// SQLSTATE: connection exceptions (class 08), too many connections, and a server shutting down,
// crashed or starting.
const UNREACHABLE_STATES = /^(08...|53300|57P0[123])$/;
const UNREACHABLE_SOCKET = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
]);
// What pg and PGlite say when a connection is gone or never came, having no code for it.
const UNREACHABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|PGlite is closed/;

/**
 * Whether `error` says the database could not be reached or answer (a restart, a network
 * failure, a full pool), rather than that the statement was wrong: the request may be retried.
 */
export function isStoreUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (UNREACHABLE_STATES.test(code) || UNREACHABLE_SOCKET.has(code))) {
    return true;
  }
  return UNREACHABLE_MESSAGE.test(error.message);
}

const RECONNECT_DELAY_MS = 1_000;

const listenerName = (channel: string) => `listen:${channel}`;

/** How many connections to this database LISTEN on `channel` through `Database.listen`. */
export async function listenerCount(db: Queryable, channel: string): Promise<number> {
  const rows = await db.query<{ listeners: number }>(
    `SELECT count(*)::int AS listeners FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = $1`,
    [listenerName(channel)],
  );
  return rows[0]?.listeners ?? 0;
}

/** A connection of its own that LISTENs, and connects again whenever it is lost. */
function listenWithReconnect(
  connectionString: string,
  channel: string,
  handlers: NotificationHandlers,
): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;

  const lost = () => {
    if (!client) return;
    client = null;
    handlers.disconnected();
    if (!stopped) retry = setTimeout(connect, RECONNECT_DELAY_MS);
  };
  async function connect() {
    const candidate = new pg.Client({
      connectionString,
      connectionTimeoutMillis: 5_000,
      // Lets a writer count who listens (see listenerCount).
      application_name: listenerName(channel),
    });
    candidate.on("notification", (note) => {
      if (note.channel === channel) handlers.message(note.payload ?? "");
    });
    candidate.on("error", () => candidate.end().catch(() => {}));
    candidate.on("end", () => {
      if (client === candidate) lost();
    });
    try {
      await candidate.connect();
      // The channel is a constant of ours; LISTEN takes no parameters.
      await candidate.query(`LISTEN ${channel}`);
    } catch {
      await candidate.end().catch(() => {});
      if (!stopped) retry = setTimeout(connect, RECONNECT_DELAY_MS);
      return;
    }
    if (stopped) {
      await candidate.end();
      return;
    }
    client = candidate;
    handlers.connected();
  }
  void connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = null;
    await current?.end();
  };
}
