import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../db/database.ts";
import { alwaysSpare, type SpareCapacity } from "../jobs/spare-capacity.ts";
import { takeEvents, takeEventsOfForm } from "./event-outbox.repository.ts";
import type { SubmissionEvents } from "./submission-events.ts";

/**
 * Events per transaction: one statement takes them, and a few more write their records and jobs
 * (src/notifications/submission-events.ts), which commit together.
 */
const BATCH = 50;
/** A pass even when not woken: events a failed pass left, and those of instances that stopped. */
const SWEEP_MS = 1_000;

/** Turns a form's pending events into records and jobs before its records are read. */
export interface PendingEvents {
  relayForm(formId: string): Promise<void>;
}

/** For an app without an intake: nothing is ever pending. */
export const nothingPending: PendingEvents = { relayForm: async () => {} };

export interface EventRelay extends PendingEvents {
  /** Relays at once: this instance has just stored an event. */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Relays the submission events that the intake's one statement leaves in the outbox (migration
 * 015): each is taken out, and its email records, deliveries and jobs written, in one
 * transaction, so an event is relayed exactly once whatever fails when. Runs when the intake of
 * its instance wakes it, having stored an event, and every second; every instance runs one.
 *
 * A pass first waits for `capacity`: while requests saturate the instance it starts at most
 * about once a second, and takes what a second of intake left in full batches, rather than a
 * few events per pass at the cost of the same statements (docs/decisions.md, "Background work
 * yields to requests"). The events are durable in the outbox meanwhile, and the API's reads
 * (`relayForm`) never wait.
 */
export function startEventRelay(
  db: Database,
  events: SubmissionEvents,
  log: Pick<FastifyBaseLogger, "warn">,
  capacity: SpareCapacity = alwaysSpare,
): EventRelay {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  async function relayAll() {
    for (;;) {
      const taken = await db.transaction(async (tx) => {
        const batch = await takeEvents(tx, events.relay, BATCH);
        await events.enqueueSubmissionEvents(tx, batch);
        return batch.length;
      });
      if (taken < BATCH || stopped) return;
    }
  }

  function relay() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = capacity
      .wait()
      .then(relayAll)
      .catch((error) => log.warn({ err: error }, "submission events: relay failed; retried"))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          relay();
        }
      });
  }

  const sweep = setInterval(relay, SWEEP_MS);
  sweep.unref();

  return {
    wake: relay,
    async relayForm(formId) {
      await db.transaction(async (tx) => {
        await events.enqueueSubmissionEvents(tx, await takeEventsOfForm(tx, formId));
      });
    },
    async stop() {
      stopped = true;
      clearInterval(sweep);
      await running;
    },
  };
}
