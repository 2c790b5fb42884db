/** Adds `amount` to the count at `key` and answers the new total, as one atomic step. */
export type IncrementBy = (key: string, amount: number, expiryMs: number) => Promise<number>;

interface PendingCounts {
  /** How long a new key lives: that of the turn's first request, the longest. */
  expiryMs: number;
  waiters: { resolve(count: number): void; reject(error: unknown): void }[];
}

/**
 * Counts requests at a shared store with one increment per key per turn of the event loop.
 * Under load, the requests parsed in one turn mostly share a key (one API key's bucket), and an
 * increment each cost the store and this process more than the counting itself. The total the
 * store answers is handed out in order, as if each request had been incremented alone in turn:
 * request i of n receives total - n + i. Another instance's increments land before or after the
 * whole turn, never inside it, so every count stays distinct and exact across instances.
 */
export function coalescedCounts(incrementBy: IncrementBy) {
  let pending = new Map<string, PendingCounts>();

  function flush() {
    const turn = pending;
    pending = new Map();
    for (const [key, { expiryMs, waiters }] of turn) {
      incrementBy(key, waiters.length, expiryMs).then(
        (total) => {
          let counted = total - waiters.length;
          for (const waiter of waiters) waiter.resolve(++counted);
        },
        (error: unknown) => {
          for (const waiter of waiters) waiter.reject(error);
        },
      );
    }
  }

  /** Counts one request at `key`; answers its count, this request included. */
  return function count(key: string, expiryMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      // setImmediate runs after the turn's I/O callbacks: every request parsed in it is here.
      if (pending.size === 0) setImmediate(flush);
      const counts = pending.get(key);
      if (counts) counts.waiters.push({ resolve, reject });
      else pending.set(key, { expiryMs, waiters: [{ resolve, reject }] });
    });
  };
}
