import { Redis } from "ioredis";
import { coalescedCounts } from "./coalesced-counts.ts";
import { decideFromCount, fixedWindowAt } from "./fixed-window.ts";
import { createMemoryRateLimiter } from "./memory-rate-limiter.ts";
import type { RateLimiter } from "./rate-limiter.ts";

/** The part of a pino (Fastify) logger the limiter reports Redis outages to. */
export interface RateLimitLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisRateLimiterOptions {
  redisUrl: string;
  /** Whole seconds. */
  windowSeconds: number;
  keyPrefix?: string;
  log: RateLimitLogger;
  /** Clock in milliseconds, for windows and the cool-down; injectable for tests. */
  now?: () => number;
  /** Counts requests while Redis is unavailable; closed with this limiter. */
  fallback?: RateLimiter;
}

// INCRBY and PEXPIRE in one script: concurrent requests from every instance see one count,
// and no key is ever left behind without an expiry.
const INCREMENT_SCRIPT = `
local count = redis.call("INCRBY", KEYS[1], ARGV[1])
if count == tonumber(ARGV[1]) then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return count`;

/** Rate limiting runs on every request, so a slower reply counts as Redis being unavailable. */
const COMMAND_TIMEOUT_MS = 150;
/** Frees a command that a hung Redis never answers; the request stopped waiting for it long before. */
const COMMAND_BACKSTOP_MS = 1000;
/**
 * After a failure only one request per cool-down tries Redis, so a hung server costs one timeout
 * per cool-down rather than one per request.
 */
const COOL_DOWN_MS = 1000;
const RECONNECT_INTERVAL_MS = 1000;
/** Keys outlive their window a little, so an instance whose clock lags still finds the shared count. */
const EXPIRY_SLACK_MS = 1000;

/**
 * `reply`, or a rejection when it has not come `ms` after the call. A timer that fires late
 * because this process was busy (a saturated event loop) runs before the replies that arrived
 * meanwhile are read: the verdict waits for one more turn of the event loop, after pending I/O
 * (setImmediate), so that a reply Redis sent in time is not taken for an outage.
 */
function answeredWithin<T>(ms: number, reply: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => setImmediate(() => reject(new Error(`Redis did not answer within ${ms} ms`))),
      ms,
    );
    reply.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export interface RedisRateLimiter extends RateLimiter {
  /** Settles once the first connection attempt has: connected, or failed (then retried). */
  readonly firstConnectAttempt: Promise<void>;
}

/**
 * Counts in Redis so every instance shares one quota per bucket. While Redis is down or hung,
 * requests are counted by `fallback` in this process instead: rate limiting must never make the
 * API itself unavailable.
 */
export function createRedisRateLimiter({
  redisUrl,
  windowSeconds,
  keyPrefix = "formdeck:rl",
  log,
  now = Date.now,
  fallback = createMemoryRateLimiter({ windowSeconds, now }),
}: RedisRateLimiterOptions): RedisRateLimiter {
  const redis = new Redis(redisUrl, {
    // Commands fail at once while disconnected instead of queueing behind a dead connection.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // A request whose reply was lost has been counted by the fallback; resending would count it twice.
    autoResendUnfulfilledCommands: false,
    // The 150 ms bound is answeredWithin's, which does not mistake a busy process for a slow Redis.
    commandTimeout: COMMAND_BACKSTOP_MS,
    connectTimeout: 500,
    // A connection that stops answering (hung server, silently dropped network) is replaced,
    // rather than lingering until TCP gives up minutes later.
    socketTimeout: 1000,
    // close() must not keep the process alive waiting for a hung server to acknowledge.
    disconnectTimeout: 200,
    // The ready check waits while Redis loads its data set; commands failing meanwhile is better.
    enableReadyCheck: false,
    retryStrategy: () => RECONNECT_INTERVAL_MS,
    lazyConnect: true,
    // The counts of the requests parsed in one turn of the event loop go to Redis in one write,
    // and come back in one: a socket write each cost both processes more than the count itself.
    enableAutoPipelining: true,
  });
  // And the requests of one turn that share a bucket are one increment.
  const count = coalescedCounts(async (key, amount, expiryMs) =>
    Number(await redis.eval(INCREMENT_SCRIPT, 1, key, amount, expiryMs)),
  );

  let unavailable = false;
  let retryRedisAt = 0;
  let probeInFlight = false;

  function reportUnavailable(err: unknown) {
    retryRedisAt = now() + COOL_DOWN_MS;
    if (unavailable) return;
    unavailable = true;
    log.warn({ err }, "Redis unavailable: rate limits are counted per instance until it is back");
  }

  function reportAvailable() {
    if (!unavailable) return;
    unavailable = false;
    log.info({}, "Redis is back: rate limits are shared across instances again");
  }

  // Without a listener, ioredis would print every connection error.
  redis.on("error", reportUnavailable);
  // Requests right after start-up wait for the first connection attempt (bounded by the timeouts
  // above) so they are counted in Redis, not in the fallback. Its failure reaches the "error" listener.
  const firstConnectAttempt = redis.connect().catch(() => {});

  return {
    firstConnectAttempt,
    async consume(bucket, max) {
      await firstConnectAttempt;
      if (unavailable && (probeInFlight || now() < retryRedisAt)) {
        return fallback.consume(bucket, max);
      }
      // During an outage, this request is the single probe that finds out whether Redis is back.
      const isProbe = unavailable;
      if (isProbe) probeInFlight = true;
      const nowMs = now();
      const window = fixedWindowAt(nowMs, windowSeconds);
      const key = `${keyPrefix}:${bucket}:${window.index}`;
      try {
        const counted = await answeredWithin(
          COMMAND_TIMEOUT_MS,
          count(key, window.endMs - nowMs + EXPIRY_SLACK_MS),
        );
        reportAvailable();
        return decideFromCount(counted, max, window, nowMs);
      } catch (err) {
        reportUnavailable(err);
        return fallback.consume(bucket, max);
      } finally {
        if (isProbe) probeInFlight = false;
      }
    },
    async close() {
      // disconnect(), not quit(): quit waits for a reply that a hung server never sends.
      redis.disconnect();
      await fallback.close();
    },
  };
}
