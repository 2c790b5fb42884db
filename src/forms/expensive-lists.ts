import { AppError } from "../http/errors.ts";

export interface ExpensiveListLimits {
  /** Expensive lists one organization may run at once in this process. */
  perOrganization: number;
  /** Expensive lists all organizations together may run at once: the rest stays for cheap ones. */
  total: number;
  /** How long a request waits for its turn before it is refused. */
  waitMs: number;
}

/** Refused for lack of a turn; the answer says when to try again. */
export class ListBusyError extends AppError {
  readonly retryAfterSeconds = 1;
}

interface Waiter {
  organizationId: string;
  start(): void;
}

/**
 * Takes turns for expensive lists (searches, deep pages): one organization cannot take more than
 * its share of the store, and all of them together leave room for the cheap requests of others.
 * A request without a turn waits up to `waitMs`, then is refused: 429 when its organization holds
 * all its turns, 503 when others hold the rest.
 */
export function createExpensiveListGate(limits: ExpensiveListLimits) {
  const running = new Map<string, number>();
  let total = 0;
  const waiting: Waiter[] = [];

  const canStart = (organizationId: string) =>
    total < limits.total && (running.get(organizationId) ?? 0) < limits.perOrganization;
  const start = (organizationId: string) => {
    total++;
    running.set(organizationId, (running.get(organizationId) ?? 0) + 1);
  };
  const finish = (organizationId: string) => {
    total--;
    const left = (running.get(organizationId) ?? 1) - 1;
    if (left === 0) running.delete(organizationId);
    else running.set(organizationId, left);
    // The longest waiting first, skipping those whose organization still holds all its turns.
    for (let i = 0; i < waiting.length && total < limits.total; ) {
      const waiter = waiting[i] as Waiter;
      if (!canStart(waiter.organizationId)) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      start(waiter.organizationId);
      waiter.start();
    }
  };

  function turn(organizationId: string): Promise<void> {
    if (canStart(organizationId)) {
      start(organizationId);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        organizationId,
        start() {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(waiter), 1);
        const own = (running.get(organizationId) ?? 0) >= limits.perOrganization;
        reject(
          own
            ? new ListBusyError(
                "rate_limit_exceeded",
                `rate limit: at most ${limits.perOrganization} searches or deep pages at a time per organization; retry in 1 s`,
              )
            : new ListBusyError(
                "service_unavailable",
                "store: busy with other searches and deep pages; retry in 1 s",
              ),
        );
      }, limits.waitMs);
      waiting.push(waiter);
    });
  }

  return {
    /** Runs `work` when `organizationId` has a turn; throws ListBusyError if none comes in time. */
    async run<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
      await turn(organizationId);
      try {
        return await work();
      } finally {
        finish(organizationId);
      }
    },
  };
}

export type ExpensiveListGate = ReturnType<typeof createExpensiveListGate>;

/**
 * PostgreSQL runs statements side by side on a pool of 10 connections: two per organization and
 * four in all leave six for everything else. The embedded store runs one statement at a time, so
 * every expensive list is a wait for all other requests: one at a time (with two, another
 * organization's list of 200,000 forms deep waited 1.1 s at p99).
 */
export function expensiveListLimits(db: { kind: "pglite" | "postgres" }): ExpensiveListLimits {
  return db.kind === "postgres"
    ? { perOrganization: 2, total: 4, waitMs: 1000 }
    : { perOrganization: 1, total: 1, waitMs: 1000 };
}
