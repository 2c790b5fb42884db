import "./env-file.ts";
import type { Server } from "node:http";
import v8 from "node:v8";
import { DataDirError, prepareDataDir } from "./admin/data-dir.ts";
import { openEmbeddedStore } from "./admin/embedded-store.ts";
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { type Database, openDatabase } from "./db/database.ts";
import { startHotTablesVacuum } from "./db/hot-tables-vacuum.ts";
import { migrate } from "./db/migrations.ts";
import { startAutoCloseSweep } from "./forms/auto-close-sweep.ts";
import { createCaptchaVerifier, DEFAULT_CAPTCHA_TIMEOUT_MS } from "./intake/captcha-verifier.ts";
import { createCountryResolver } from "./intake/country-resolver.ts";
import { spareCapacity } from "./jobs/spare-capacity.ts";
import { createLogger, logBackendsInUse } from "./logger.ts";
import { startNotifications } from "./notifications/notifications.ts";
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

/**
 * On the embedded store the process holds PostgreSQL's memory as well as its own, so V8 collects
 * its old generation once it has grown 20 % past what the last collection kept alive, instead of
 * the 50 % `npm start` gives: 6 to 10 MB less at the embedded bench's peak, with as many lists
 * and creates a second (docs/decisions.md, "Memory"). V8 reads the flag at every collection, so
 * setting it now applies to the main thread's heap and to the store's thread, started after it.
 */
const EMBEDDED_HEAP_GROWING_PERCENT = 20;

/** PostgreSQL as it is; the embedded store locked, behind its admin socket for the CLI. */
async function openStore(): Promise<{ db: Database; closeStore: () => Promise<void> }> {
  if (config.databaseUrl) {
    logBackendsInUse(logger, config);
    const db = await openDatabase(config);
    logApplied(await migrate(db));
    return { db, closeStore: () => db.close() };
  }
  v8.setFlagsFromString(`--heap-growing-percent=${EMBEDDED_HEAP_GROWING_PERCENT}`);
  // A DATA_DIR refused, or held by another process, is the only line a refused start prints.
  await prepareDataDir(config.dataDir as string);
  const { db, applied, close } = await openEmbeddedStore(config.dataDir as string, logger, () =>
    logBackendsInUse(logger, config),
  );
  logApplied(applied);
  return { db, closeStore: close };
}

function logApplied(migrations: string[]) {
  if (migrations.length > 0) logger.info({ migrations }, "migrations applied");
}

/** How long shutdown waits for running jobs, within the 10 s a SIGTERM is given. */
const JOB_DRAIN_MS = 4_000;

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

/**
 * Every SIGTERM and SIGINT is handled: Ctrl-C under `npm start` arrives twice (from the terminal
 * and forwarded by npm), and a signal that finds no listener kills the process without a drain,
 * as one did that arrived between the "Server listening" line and the end of start-up. One that
 * arrives once the store is open stops the server as soon as it listens; before that, opening
 * the store may wait on a database, and the signal ends the process at once as it always did.
 */
function onStopSignal(): { stopWith(stop: (signal: string) => Promise<void>): void } {
  let stop: ((signal: string) => Promise<void>) | undefined;
  let early: string | undefined;
  const handle = (signal: string) => {
    if (stop) void stop(signal);
    else early ??= signal;
  };
  process.on("SIGTERM", handle);
  process.on("SIGINT", handle);
  return {
    stopWith(ready) {
      stop = ready;
      if (early) void stop(early);
    },
  };
}

async function start() {
  const { db, closeStore } = await openStore();
  const signals = onStopSignal();
  const limiter = await createRateLimiter({
    redisUrl: config.redisUrl,
    windowSeconds: config.rateLimitWindowSeconds,
    log: logger,
  });
  // Its own limiter: the intake's window is not the API's.
  const intakeLimiter = await createRateLimiter({
    redisUrl: config.redisUrl,
    windowSeconds: config.intakeRateLimitWindowSeconds,
    log: logger,
  });
  // Notifications (the relay and the workers) yield to requests when these saturate the instance
  // (src/jobs/spare-capacity.ts).
  const capacity = spareCapacity();
  const notifications = await startNotifications({ db, config, log: logger, capacity });
  const intake = {
    events: notifications.events,
    capacity,
    limiter: intakeLimiter,
    captcha: createCaptchaVerifier({
      verifyUrls: config.captchaVerifyUrls,
      minScore: config.captchaMinScore,
      timeoutMs: DEFAULT_CAPTCHA_TIMEOUT_MS,
    }),
    countries: createCountryResolver(config.countryHeader),
  };
  const app = await buildApp({
    config,
    db,
    limiter,
    logger,
    intake,
    deliveryQueue: notifications.deliveryQueue,
  });
  const sweep = startAutoCloseSweep(db, config.autoCloseSweepSeconds * 1000, logger);
  const retention = startRetentionSweep(db, config.retentionSweepSeconds * 1000, logger);
  const fold = startSubmissionCountFold(db, config.submissionCountFoldSeconds * 1000, logger);
  const hotTablesVacuum = startHotTablesVacuum(db, logger);
  app.server.on("request", (_request, response) => capacity.track(response));
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
    // Deliveries under way get a few seconds; one cut short runs again on another instance, or
    // here after the restart, once its heartbeat is missed.
    await notifications.stop(JOB_DRAIN_MS);
    capacity.stop();
    await sweep.stop();
    await retention.stop();
    await fold.stop();
    await hotTablesVacuum?.stop();
    await limiter.close();
    await intakeLimiter.close();
    await closeStore();
    logger.info("stopped");
    process.exit(0);
  };
  signals.stopWith(stop);
}

start().catch((error: unknown) => {
  if (error instanceof DataDirError) {
    // The operator's to fix, as a bad configuration is: one line that says what to do.
    process.stderr.write(`formdeck: ${error.message}\n`);
  } else {
    logger.fatal({ err: error }, "formdeck could not start");
  }
  process.exit(1);
});
