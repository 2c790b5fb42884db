import type { RateLimitDecision } from "./rate-limiter.ts";

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
