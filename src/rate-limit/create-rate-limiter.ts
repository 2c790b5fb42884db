import { createMemoryRateLimiter } from "./memory-rate-limiter.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { createRedisRateLimiter, type RateLimitLogger } from "./redis-rate-limiter.ts";

export interface RateLimiterOptions {
  /** With Redis, every instance shares one quota; without it, each instance counts on its own. */
  redisUrl: string | null;
  windowSeconds: number;
  log: RateLimitLogger;
}

export function createRateLimiter({
  redisUrl,
  windowSeconds,
  log,
}: RateLimiterOptions): RateLimiter {
  return redisUrl
    ? createRedisRateLimiter({ redisUrl, windowSeconds, log })
    : createMemoryRateLimiter({ windowSeconds });
}
