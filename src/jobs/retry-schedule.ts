/**
 * The waits between delivery attempts of an email or a webhook, in seconds, counted from the end
 * of the failed attempt (notifications.md §3): 8 attempts in all. Configuration may shorten them
 * (`DELIVERY_RETRY_DELAYS_SECONDS`, for tests); the engine's clock is never faked.
 */
export const DEFAULT_RETRY_DELAYS_SECONDS: readonly number[] = Object.freeze([
  5, 300, 1_800, 7_200, 18_000, 36_000, 36_000,
]);

/**
 * When the attempt after `attemptsMade` failed ones is due, `endedAt` being the end of the last:
 * null once every attempt of the schedule has been made.
 */
export function nextAttemptAt(
  delaysSeconds: readonly number[],
  attemptsMade: number,
  endedAt: Date,
): Date | null {
  const delay = delaysSeconds[attemptsMade - 1];
  return delay === undefined ? null : new Date(endedAt.getTime() + delay * 1000);
}
