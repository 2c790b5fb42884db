import type { RateLimitDecision, RateLimiter } from "./rate-limiter.ts";

export interface FixedWindow {
  /** floor(now / window length): the same for every process whose clock agrees, Redis included. */
  index: number;
  endMs: number;
}

/** Windows are aligned to the Unix epoch so every instance agrees on where they start and end. */
export function fixedWindowAt(nowMs: number, windowSeconds: number): FixedWindow {
  const windowMs = windowSeconds * 1000;
  const index = Math.floor(nowMs / windowMs);
  return { index, endMs: (index + 1) * windowMs };
}

/** Turns the count of requests so far in `window` (this one included) into a decision. */
export function decideFromCount(
  count: number,
  max: number,
  window: FixedWindow,
  nowMs: number,
): RateLimitDecision {
  return {
    allowed: count <= max,
    limit: max,
    remaining: Math.max(0, max - count),
    resetAt: window.endMs / 1000,
    retryAfter: Math.max(1, Math.ceil((window.endMs - nowMs) / 1000)),
  };
}

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
