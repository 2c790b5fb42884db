import { decideFromCount, fixedWindowAt } from "./fixed-window.ts";
import type { RateLimiter } from "./rate-limiter.ts";

export interface MemoryRateLimiter extends RateLimiter {
  /** How many buckets are counted right now; shows that memory stays bounded. */
  trackedBuckets(): number;
}

export interface MemoryRateLimiterOptions {
  windowSeconds: number;
  /** Clock in milliseconds; injectable so tests can move between windows. */
  now?: () => number;
}

/** Counts requests per bucket in this process only: for a single instance, or while Redis is down. */
export function createMemoryRateLimiter({
  windowSeconds,
  now = Date.now,
}: MemoryRateLimiterOptions): MemoryRateLimiter {
  const counts = new Map<string, number>();
  let countedWindowIndex: number | null = null;

  return {
    async consume(bucket, max) {
      const nowMs = now();
      const window = fixedWindowAt(nowMs, windowSeconds);
      if (window.index !== countedWindowIndex) {
        // Counts only matter within their window, so a new window makes every old one garbage.
        counts.clear();
        countedWindowIndex = window.index;
      }
      const count = (counts.get(bucket) ?? 0) + 1;
      counts.set(bucket, count);
      return decideFromCount(count, max, window, nowMs);
    },
    trackedBuckets: () => counts.size,
    async close() {
      counts.clear();
    },
  };
}
