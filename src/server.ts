import { type AdminSocket, listenAdminSocket } from "./admin/admin-socket.ts";
import { adminSocketPath } from "./admin/admin-socket-protocol.ts";
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { type Database, openDatabase, type Queryable } from "./db/database.ts";
import { migrate } from "./db/migrations.ts";
import { startAutoCloseSweep } from "./forms/auto-close-sweep.ts";
import { createLogger } from "./logger.ts";
import { createRateLimiter } from "./rate-limit/create-rate-limiter.ts";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`formdeck: ${error.message}\n`);
  process.exit(1);
}

const logger = createLogger(config.logLevel);

/**
 * The embedded store belongs to one process. Claiming its admin socket first both refuses a
 * second server on the same DATA_DIR and lets the CLI reach this one while it runs.
 */
async function openStore(): Promise<{ db: Database; adminSocket: AdminSocket | null }> {
  if (config.databaseUrl) {
    const db = await openDatabase(config);
    return { db, adminSocket: null };
  }
  const dataDir = config.dataDir as string;
  let ready: (db: Database) => void = () => {};
  const opened = new Promise<Database>((resolve) => {
    ready = resolve;
  });
  const deferred: Queryable = { query: async (sql, params) => (await opened).query(sql, params) };
  const adminSocket = await listenAdminSocket({
    db: deferred,
    socketPath: adminSocketPath(dataDir),
    log: logger,
  });
  const db = await openDatabase(config);
  ready(db);
  return { db, adminSocket };
}

async function start() {
  const { db, adminSocket } = await openStore();
  const applied = await migrate(db);
  if (applied.length > 0) logger.info({ migrations: applied }, "migrations applied");
  const limiter = createRateLimiter({
    redisUrl: config.redisUrl,
    windowSeconds: config.rateLimitWindowSeconds,
    log: logger,
  });
  const app = await buildApp({ config, db, limiter, logger });
  const sweep = startAutoCloseSweep(db, config.autoCloseSweepSeconds * 1000, logger);
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing requests in flight");
    // In-flight requests finish and commit before the store is closed. A keep-alive connection
    // whose request finishes during the drain would otherwise hold the close open until its
    // keep-alive timeout (72 s): it is closed as soon as it is idle.
    const reapIdle = setInterval(() => app.server.closeIdleConnections(), 100);
    await app.close();
    clearInterval(reapIdle);
    await sweep.stop();
    await adminSocket?.close();
    await limiter.close();
    await db.close();
    logger.info("stopped");
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

start().catch((error: unknown) => {
  logger.fatal({ err: error }, "formdeck could not start");
  process.exit(1);
});
