import type { Writable } from "node:stream";
import type { Config } from "../config.ts";
import {
  type Database,
  type DatabaseOptions,
  openDatabase,
  type Queryable,
} from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { type AdminResult, type JsonCommand, runAdminCommand } from "./admin-commands.ts";
import { DataDirInUseError } from "./admin-socket.ts";
import { type AdminReply, sendAdminCommand, streamAdminExport } from "./admin-socket-client.ts";
import { adminSocketPath } from "./admin-socket-protocol.ts";
import { DataDirError, prepareDataDir } from "./data-dir.ts";
import { openEmbeddedStore } from "./embedded-store.ts";
import { StoreLockedError } from "./store-lock.ts";
import {
  copyInto,
  type ExportCommand,
  openSubmissionsExport,
} from "./submissions-export-command.ts";

// While another process holds the store, its socket is asked again this often: a server
// between taking the lock and listening, or another CLI running its one command.
const CLAIM_ATTEMPTS = 10;
const CLAIM_RETRY_MS = 200;

async function openMigrated(options: DatabaseOptions): Promise<Database> {
  const db = await openDatabase(options);
  try {
    await migrate(db);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** What a command does on the store it runs on, and through the server that holds it. */
interface StoreWork<T> {
  onStore(db: Queryable): Promise<T>;
  throughSocket(socketPath: string): Promise<AdminReply<T>>;
}

async function runOnPostgres<T>(databaseUrl: string, work: StoreWork<T>): Promise<T> {
  const db = await openMigrated({ databaseUrl, dataDir: null });
  try {
    return await work.onStore(db);
  } finally {
    await db.close();
  }
}

/** Runs the command on the embedded store, holding its lock so that no server opens it meanwhile. */
async function runHoldingStore<T>(dataDir: string, work: StoreWork<T>): Promise<T> {
  const store = await openEmbeddedStore(dataDir, { error() {} });
  try {
    return await work.onStore(store.db);
  } finally {
    await store.close();
  }
}

/**
 * The embedded store belongs to one process: ask the one running on DATA_DIR, if any, and
 * open the store only when no process holds it. A holder that never answers (its socket file
 * was removed) is reported: writing to its store behind its back would be lost.
 */
async function runOnEmbeddedStore<T>(dataDir: string, work: StoreWork<T>): Promise<T> {
  await prepareDataDir(dataDir);
  const socketPath = adminSocketPath(dataDir);
  for (let attempt = 1; ; attempt++) {
    const reply = await work.throughSocket(socketPath);
    if (reply.kind === "result") return reply.result;
    try {
      return await runHoldingStore(dataDir, work);
    } catch (error) {
      const held = error instanceof StoreLockedError || error instanceof DataDirInUseError;
      if (!held) throw error;
      if (attempt === CLAIM_ATTEMPTS) {
        const holder = error instanceof StoreLockedError ? ` (pid ${error.holderPid})` : "";
        throw new DataDirError(
          `DATA_DIR ${dataDir} is held by a formdeck process${holder} that does not answer on ${socketPath}: restart that server to run commands through it`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS));
    }
  }
}

/** PostgreSQL directly, the embedded store through the server that holds it, or by opening it. */
function onConfiguredStore<T>(config: Config, work: StoreWork<T>): Promise<T> {
  if (config.databaseUrl) return runOnPostgres(config.databaseUrl, work);
  // loadConfig always resolves a DATA_DIR; only tests build configs with an in-memory store.
  return runOnEmbeddedStore(config.dataDir as string, work);
}

/**
 * Runs a command on the store `config` names: PostgreSQL directly, the embedded store through
 * the server that holds it, or by opening it when no server does.
 */
export function runOnConfiguredStore(config: Config, command: JsonCommand): Promise<AdminResult> {
  return onConfiguredStore(config, {
    onStore: (db) => runAdminCommand(db, command),
    throughSocket: (socketPath) => sendAdminCommand(socketPath, command),
  });
}

/**
 * Writes the export into `out` from the store `config` names, as runOnConfiguredStore runs a
 * command: a batch at a time, so memory stays the same whatever the number of submissions.
 */
export function exportOnConfiguredStore(
  config: Config,
  command: ExportCommand,
  out: Writable,
): Promise<void> {
  return onConfiguredStore(config, {
    onStore: async (db) => copyInto((await openSubmissionsExport(db, command)).body, out),
    throughSocket: (socketPath) => streamAdminExport(socketPath, command, out),
  });
}
