import pg from "pg";
import { copyBinaryColumn } from "./copy-binary.ts";
import { openPgliteThread } from "./pglite-store.ts";

export interface QueryOptions {
  /**
   * Plan the statement for its parameters on every run, never once for all: for a statement
   * whose best plan depends on a parameter's value, such as a LIKE pattern.
   */
  planEachTime?: boolean;
  /** No statement timeout: for migrations, never on a request path. */
  unbounded?: boolean;
  /**
   * `sql` is a script of several statements and takes no parameters (the job engine installs
   * and maintains its schema so): it runs through the simple protocol, never prepared, and the
   * rows of all its statements come back in order.
   */
  script?: boolean;
}

/** Anything that runs parameterized SQL: the database itself or one of its transactions. */
export interface Queryable {
  /** Which store runs it: a few statements take their parameters in the form each is fastest with. */
  readonly kind: "pglite" | "postgres";
  query<Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
}

export interface NotificationHandlers {
  message(payload: string): void;
  /**
   * Listening: from now on every notification arrives. `backendPid` names the listening
   * connection on PostgreSQL (a writer that counts listeners may leave its own out).
   */
  connected(backendPid?: number): void;
  /** Not listening, until `connected` again: notifications sent meanwhile are lost. */
  disconnected(): void;
}

export interface Database extends Queryable {
  /** Delivers what NOTIFY sends on `channel`; the returned function stops listening. */
  listen(channel: string, handlers: NotificationHandlers): () => Promise<void>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL only (null on the embedded store): runs `setup` with `params`, then `copy`, a
   * `COPY (SELECT …) TO STDOUT (FORMAT binary)` that reads what `setup` set, on one connection;
   * resolves to the first column of each row as bytes, never turned into text on the way.
   */
  readonly copyBinary:
    | ((setup: string, params: readonly unknown[], copy: string) => Promise<(Buffer | null)[]>)
    | null;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  /** PGlite data directory; `null` for an in-memory store. */
  dataDir: string | null;
}

/**
 * The longest a statement may take. Queries on a request path are bounded far below it (see
 * forms.repository.ts); it stops whatever was missed before it holds the store for the others.
 */
export const STATEMENT_TIMEOUT_MS = 5_000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl)
    : openPgliteThread(options.dataDir, STATEMENT_TIMEOUT_MS);
}

async function openPostgres(connectionString: string): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 5_000,
    // A statement that hangs (a dead server, a lock) must not hold a request forever.
    query_timeout: 10_000,
    // The server stops a statement that runs too long; JIT compilation, which PostgreSQL starts
    // for a statement it expects to be expensive, costs more than it saves on such short ones.
    statement_timeout: STATEMENT_TIMEOUT_MS,
    options: "-c jit=off",
  });
  // An idle client losing its connection (a server restart) must not crash the process.
  pool.on("error", () => {});
  // The pool listens for errors only on idle clients: one lost while checked out, between two
  // statements of a transaction or between the pool's own steps, emits an 'error' that, unheard,
  // ends the process. Every client gets a listener for its life. The next statement on it fails
  // as not queryable (the store reads as unreachable: 503), and the pool drops it when released.
  pool.on("connect", (client) => client.on("error", () => {}));
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
    if (options?.script) {
      const results = (await q.query(sql)) as unknown as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(results) ? results : [results]).flatMap((r) => r.rows ?? []) as Row[];
    }
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
        const result = await work({
          kind: "postgres",
          query: (sql, p, options) => run(client, sql, p, options),
        });
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
    async copyBinary(setup, params, copy) {
      const client = await pool.connect();
      try {
        await run(client, setup, params);
        return await copyBinaryColumn(client, copy);
      } finally {
        // A client whose connection was lost is dropped by the pool, not handed out again.
        client.release();
      }
    },
    listen: (channel, handlers) => listenWithReconnect(connectionString, channel, handlers),
    close: () => pool.end(),
  };
}

// SQLSTATE: connection exceptions (class 08), too many connections, a statement stopped by its
// timeout, and a server shutting down, crashed or starting.
const UNREACHABLE_STATES = /^(08...|53300|57014|57P0[123])$/;
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

/** The application_name of the connections that LISTEN on `channel`: how writers count them. */
export const listenerName = (channel: string) => `listen:${channel}`;

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
    let backendPid: number | undefined;
    try {
      await candidate.connect();
      // The channel is a constant of ours; LISTEN takes no parameters.
      await candidate.query(`LISTEN ${channel}`);
      const rows = await candidate.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      backendPid = rows.rows[0]?.pid;
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
    handlers.connected(backendPid);
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
