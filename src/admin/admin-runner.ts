import type { Config } from "../config.ts";
import { type Database, type DatabaseOptions, openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { type AdminCommand, type AdminResult, runAdminCommand } from "./admin-commands.ts";
import { DataDirInUseError } from "./admin-socket.ts";
import { sendAdminCommand } from "./admin-socket-client.ts";
import { adminSocketPath } from "./admin-socket-protocol.ts";
import { openEmbeddedStore } from "./embedded-store.ts";

// How often the CLI retries after losing the race for the socket to another CLI.
const CLAIM_ATTEMPTS = 3;

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

/** Runs the command on the embedded store, holding its socket so that no server opens it meanwhile. */
async function runHoldingSocket(dataDir: string, command: AdminCommand): Promise<AdminResult> {
  const { db, socket } = await openEmbeddedStore(dataDir, { error() {} });
  try {
    return await runAdminCommand(db, command);
  } finally {
    // The socket first: commands queued on it finish before the store closes.
    await socket.close();
    await db.close();
  }
}

/** The embedded store belongs to one process: ask the one running on DATA_DIR, if any. */
async function runOnEmbeddedStore(dataDir: string, command: AdminCommand): Promise<AdminResult> {
  // Other CLIs may claim the socket between our two steps, and then answer on it.
  for (let attempt = 1; ; attempt++) {
    const reply = await sendAdminCommand(adminSocketPath(dataDir), command);
    if (reply.kind === "result") return reply.result;
    try {
      return await runHoldingSocket(dataDir, command);
    } catch (error) {
      if (!(error instanceof DataDirInUseError) || attempt === CLAIM_ATTEMPTS) throw error;
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
