import { type Database, openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { type AdminSocket, type AdminSocketLog, listenAdminSocket } from "./admin-socket.ts";
import { adminSocketPath } from "./admin-socket-protocol.ts";
import { acquireStoreLock } from "./store-lock.ts";

export interface EmbeddedStore {
  db: Database;
  /** Names of the migrations this opening applied. */
  applied: string[];
  /** Stops answering on the admin socket, closes the store, then lets go of its lock. */
  close(): Promise<void>;
}

/**
 * The embedded store belongs to one process. Its lock is taken first, which refuses a second
 * process on the same DATA_DIR for as long as this one lives, even if a file in DATA_DIR is
 * removed; then its admin socket is claimed, and only then is the store opened and migrated.
 * Commands that arrive on the socket meanwhile wait for the migrated store. DATA_DIR must have
 * passed `prepareDataDir` first.
 */
export async function openEmbeddedStore(
  dataDir: string,
  log: AdminSocketLog,
  /** Called once the store is this process's, before it is opened. */
  onLocked: () => void = () => {},
): Promise<EmbeddedStore> {
  const lock = await acquireStoreLock(dataDir);
  onLocked();
  const store = Promise.withResolvers<Database>();
  // Queued commands see a failure to open as their own error; the opener handles it below.
  store.promise.catch(() => {});
  let socket: AdminSocket | undefined;
  let db: Database | undefined;
  // The socket first: commands queued on it finish before the store closes.
  const closeOpened = async () => {
    await socket?.close();
    await db?.close();
    await lock.release();
  };
  try {
    socket = await listenAdminSocket({
      db: {
        kind: "pglite",
        query: async (sql, params) => (await store.promise).query(sql, params),
      },
      socketPath: adminSocketPath(dataDir),
      log,
    });
    db = await openDatabase({ databaseUrl: null, dataDir });
    const applied = await migrate(db);
    store.resolve(db);
    return { db, applied, close: closeOpened };
  } catch (error) {
    store.reject(error);
    await closeOpened();
    throw error;
  }
}
