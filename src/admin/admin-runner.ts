import type { Config } from "../config.ts";
import { type Database, type DatabaseOptions, openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { type AdminCommand, type AdminResult, runAdminCommand } from "./admin-commands.ts";
import { DataDirInUseError } from "./admin-socket.ts";
import { sendAdminCommand } from "./admin-socket-client.ts";
import { adminSocketPath } from "./admin-socket-protocol.ts";
import { DataDirError, prepareDataDir } from "./data-dir.ts";
import { openEmbeddedStore } from "./embedded-store.ts";
import { StoreLockedError } from "./store-lock.ts";

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

async function runOnPostgres(databaseUrl: string, command: AdminCommand): Promise<AdminResult> {
  const db = await openMigrated({ databaseUrl, dataDir: null });
  try {
    return await runAdminCommand(db, command);
  } finally {
    await db.close();
  }
}

/** Runs the command on the embedded store, holding its lock so that no server opens it meanwhile. */
async function runHoldingStore(dataDir: string, command: AdminCommand): Promise<AdminResult> {
  const store = await openEmbeddedStore(dataDir, { error() {} });
  try {
    return await runAdminCommand(store.db, command);
  } finally {
    await store.close();
  }
}

/**
 * The embedded store belongs to one process: ask the one running on DATA_DIR, if any, and
 * open the store only when no process holds it. A holder that never answers (its socket file
 * was removed) is reported: writing to its store behind its back would be lost.
 */
async function runOnEmbeddedStore(dataDir: string, command: AdminCommand): Promise<AdminResult> {
  await prepareDataDir(dataDir);
  const socketPath = adminSocketPath(dataDir);
  for (let attempt = 1; ; attempt++) {
    const reply = await sendAdminCommand(socketPath, command);
    if (reply.kind === "result") return reply.result;
    try {
      return await runHoldingStore(dataDir, command);
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

/**
 * Runs a command on the store `config` names: PostgreSQL directly, the embedded store through
 * the server that holds it, or by opening it when no server does.
 */
export function runOnConfiguredStore(config: Config, command: AdminCommand): Promise<AdminResult> {
  if (config.databaseUrl) return runOnPostgres(config.databaseUrl, command);
  // loadConfig always resolves a DATA_DIR; only tests build configs with an in-memory store.
  return runOnEmbeddedStore(config.dataDir as string, command);
}
