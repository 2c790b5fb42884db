import { type Database, openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { type AdminSocket, type AdminSocketLog, listenAdminSocket } from "./admin-socket.ts";
import { adminSocketPath } from "./admin-socket-protocol.ts";

export interface EmbeddedStore {
  db: Database;
  socket: AdminSocket;
  /** Names of the migrations this opening applied. */
  applied: string[];
}

/**
 * The embedded store belongs to one process. Its admin socket is claimed first, which refuses
 * a second process on the same DATA_DIR, and only then is the store opened and migrated.
 * Commands that arrive on the socket meanwhile wait for the migrated store.
 */
export async function openEmbeddedStore(
  dataDir: string,
  log: AdminSocketLog,
): Promise<EmbeddedStore> {
  const store = Promise.withResolvers<Database>();
  // Queued commands see a failure to open as their own error; the opener handles it below.
  store.promise.catch(() => {});
  const socket = await listenAdminSocket({
    db: { query: async (sql, params) => (await store.promise).query(sql, params) },
    socketPath: adminSocketPath(dataDir),
    log,
  });
  let db: Database | undefined;
  try {
    db = await openDatabase({ databaseUrl: null, dataDir });
    const applied = await migrate(db);
    store.resolve(db);
    return { db, socket, applied };
  } catch (error) {
    store.reject(error);
    await socket.close();
    await db?.close();
    throw error;
  }
}
