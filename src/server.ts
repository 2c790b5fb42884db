import type { Server } from "node:http";
import type { AdminSocket } from "./admin/admin-socket.ts";
import { openEmbeddedStore } from "./admin/embedded-store.ts";
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { type Database, openDatabase } from "./db/database.ts";
import { migrate } from "./db/migrations.ts";
import { startAutoCloseSweep } from "./forms/auto-close-sweep.ts";
import { createCaptchaVerifier, DEFAULT_CAPTCHA_TIMEOUT_MS } from "./intake/captcha-verifier.ts";
import { createCountryResolver } from "./intake/country-resolver.ts";
import { createLogger, logBackendsInUse } from "./logger.ts";
import { createRateLimiter } from "./rate-limit/create-rate-limiter.ts";
import { startRetentionSweep } from "./submissions/retention-sweep.ts";
import { startSubmissionCountFold } from "./submissions/submission-count-fold.ts";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`formdeck: ${error.message}\n`);
  process.exit(1);
}

const logger = createLogger(config.logLevel);

/** PostgreSQL as it is; the embedded store behind its admin socket, for the CLI to reach. */
async function openStore(): Promise<{ db: Database; adminSocket: AdminSocket | null }> {
  if (config.databaseUrl) {
    const db = await openDatabase(config);
    logApplied(await migrate(db));
    return { db, adminSocket: null };
  }
  const { db, socket, applied } = await openEmbeddedStore(config.dataDir as string, logger);
  logApplied(applied);
  return { db, adminSocket: socket };
}

function logApplied(migrations: string[]) {
  if (migrations.length > 0) logger.info({ migrations }, "migrations applied");
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Requests that reached this process before shutdown count as in flight, but closing at once
 * would reset connections still waiting to be accepted (the listener closes) and drop requests
 * not read yet (their connections look idle). The event loop accepts one connection per
 * turn: turns pass until two in a row bring no new connection (the second reads what the last
 * one sent), for at most `maxMs`.
 */
async function takeInArrived(server: Server, maxMs: number) {
  let connections = 0;
  const count = () => connections++;
  server.on("connection", count);
  const deadline = Date.now() + maxMs;
  try {
    let seen: number;
    do {
      seen = connections;
      await nextTurn();
      await nextTurn();
    } while (connections !== seen && Date.now() < deadline);
  } finally {
    server.off("connection", count);
  }
}

async function start() {
  logBackendsInUse(logger, config);
  const { db, adminSocket } = await openStore();
  const limiter = createRateLimiter({
    redisUrl: config.redisUrl,
    windowSeconds: config.rateLimitWindowSeconds,
    log: logger,
  });
  // Its own limiter: the intake's window is not the API's.
  const intakeLimiter = createRateLimiter({
    redisUrl: config.redisUrl,
    windowSeconds: config.intakeRateLimitWindowSeconds,
    log: logger,
  });
  const intake = {
    limiter: intakeLimiter,
    captcha: createCaptchaVerifier({
      verifyUrls: config.captchaVerifyUrls,
      minScore: config.captchaMinScore,
      timeoutMs: DEFAULT_CAPTCHA_TIMEOUT_MS,
    }),
    countries: createCountryResolver(config.countryHeader),
  };
  const app = await buildApp({ config, db, limiter, logger, intake });
  const sweep = startAutoCloseSweep(db, config.autoCloseSweepSeconds * 1000, logger);
  const retention = startRetentionSweep(db, config.retentionSweepSeconds * 1000, logger);
  const fold = startSubmissionCountFold(db, config.submissionCountFoldSeconds * 1000, logger);
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing requests in flight");
    // Bounded: a busy process takes tens of milliseconds a turn, and a flood of new connections
    // must not hold the shutdown open.
    await takeInArrived(app.server, 5000);
    // In-flight requests finish and commit before the store is closed. A keep-alive connection
    // whose request finishes during the drain would otherwise hold the close open until its
    // keep-alive timeout (72 s): it is closed as soon as it is idle.
    const reapIdle = setInterval(() => app.server.closeIdleConnections(), 100);
    await app.close();
    clearInterval(reapIdle);
    await sweep.stop();
    await retention.stop();
    await fold.stop();
    await adminSocket?.close();
    await limiter.close();
    await intakeLimiter.close();
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
