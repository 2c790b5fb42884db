export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one (never negative). */
  remaining: number;
  /** Unix time, in whole seconds, at which the current window ends. */
  resetAt: number;
  /** Whole seconds until the window ends, at least 1. */
  retryAfter: number;
}

export interface RateLimiter {
  /** Counts one request against `bucket`'s quota of `max` per window and says whether it may go on. */
  consume(bucket: string, max: number): Promise<RateLimitDecision>;
  close(): Promise<void>;
}
