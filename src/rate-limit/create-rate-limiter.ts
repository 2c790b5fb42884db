import { createMemoryRateLimiter } from "./memory-rate-limiter.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import type { RateLimitLogger } from "./redis-rate-limiter.ts";

export interface RateLimiterOptions {
  /** With Redis, every instance shares one quota; without it, each instance counts on its own. */
  redisUrl: string | null;
  windowSeconds: number;
  log: RateLimitLogger;
}

export async function createRateLimiter({
  redisUrl,
  windowSeconds,
  log,
}: RateLimiterOptions): Promise<RateLimiter> {
  if (!redisUrl) return createMemoryRateLimiter({ windowSeconds });
  // The Redis client is loaded only by an instance that uses Redis.
  const { createRedisRateLimiter } = await import("./redis-rate-limiter.ts");
  const limiter = createRedisRateLimiter({ redisUrl, windowSeconds, log });
  // Connected before the caller goes on: building the app keeps the event loop busy for a while
  // (its routes and schemas), and a connection still pending then fails its 500 ms timeout though
  // Redis answered at once (the timer is read before the socket), leaving this instance counting
  // on its own for its first second.
  await limiter.firstConnectAttempt;
  return limiter;
}
