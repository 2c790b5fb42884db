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
  return createRedisRateLimiter({ redisUrl, windowSeconds, log });
}
