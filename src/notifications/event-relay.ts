import type { FastifyBaseLogger } from "fastify";
import type { Database, Queryable } from "../db/database.ts";
import { alwaysSpare, type SpareCapacity } from "../jobs/spare-capacity.ts";
import { takeEvents, takeEventsOfForm } from "./event-outbox.repository.ts";
import type { SubmissionEvent, SubmissionEvents } from "./submission-events.ts";

/**
 * Events per transaction: one statement takes them, and a few more write their records and jobs
 * (src/notifications/submission-events.ts), which commit together.
 */
const BATCH = 50;
/**
 * Events of this instance that may wait while requests saturate it, in all and of one form: past
 * either, the relay runs at full speed until no more wait. The first bounds the outbox (about
 * 100 MB, and the lag of notifications: 50 s of an intake at 2,000 a second); the second what a
 * read of one form relays before it answers (`relayForm`).
 */
export const MAX_DEFERRED = 100_000;
export const MAX_DEFERRED_OF_FORM = 10_000;
/** Events of one form per transaction of a read's relay: each stays within the statement bound. */
const FORM_BATCH = 500;
/** A pass even when not woken: events a failed pass left, and those of instances that stopped. */
const SWEEP_MS = 1_000;

/** Turns a form's pending events into records and jobs before its records are read. */
export interface PendingEvents {
  relayForm(formId: string): Promise<void>;
}

/** For an app without an intake: nothing is ever pending. */
export const nothingPending: PendingEvents = { relayForm: async () => {} };

export interface EventRelay extends PendingEvents {
  /** Relays at once: this instance has just stored an event of the form. */
  wake(formId: string): void;
  stop(): Promise<void>;
}

/**
 * Relays the submission events that the intake's one statement leaves in the outbox (migration
 * 015): each is taken out, and its email records, deliveries and jobs written, in one
 * transaction, so an event is relayed exactly once whatever fails when. Runs when the intake of
 * its instance wakes it, having stored an event, and every second; every instance runs one.
 *
 * A pass first waits for `capacity`. While requests saturate the instance a pass starts at most
 * about once a second and relays one batch, unless more than MAX_DEFERRED of this instance's
 * events wait, or MAX_DEFERRED_OF_FORM of one form's: relaying an event costs more than storing
 * the submission, and the rest waits, durable in the outbox, until the load eases
 * (docs/decisions.md, "Background work yields to requests"). The API's reads (`relayForm`) never
 * wait: they relay their form's events themselves.
 */
export function startEventRelay(
  db: Database,
  events: SubmissionEvents,
  log: Pick<FastifyBaseLogger, "warn">,
  capacity: SpareCapacity = alwaysSpare,
  bounds = { maxDeferred: MAX_DEFERRED, maxDeferredOfForm: MAX_DEFERRED_OF_FORM },
): EventRelay {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const waiting = new WaitingEvents();

  /** The events `take` takes, recorded and enqueued in one transaction; resolves to how many. */
  async function relayTaken(take: (tx: Queryable) => Promise<SubmissionEvent[]>) {
    const batch = await db.transaction(async (tx) => {
      const taken = await take(tx);
      await events.enqueueSubmissionEvents(tx, taken);
      return taken;
    });
    for (const event of batch) waiting.relayed(event.form.id);
    return batch.length;
  }

  const mayDefer = () =>
    waiting.total <= bounds.maxDeferred && waiting.mostOfOneForm() <= bounds.maxDeferredOfForm;

  async function relayAll() {
    for (;;) {
      const taken = await relayTaken((tx) => takeEvents(tx, events.relay, BATCH));
      if (taken < BATCH || stopped) return;
      if (capacity.saturated && mayDefer()) return;
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
    wake(formId) {
      waiting.stored(formId);
      relay();
    },
    async relayForm(formId) {
      for (;;) {
        const taken = await relayTaken((tx) => takeEventsOfForm(tx, formId, FORM_BATCH));
        if (taken < FORM_BATCH) return;
      }
    },
    async stop() {
      stopped = true;
      clearInterval(sweep);
      await running;
    },
  };
}

/**
 * This instance's events not yet relayed, in all and by form, as far as it knows: another relay
 * may take some (those older than a few seconds), and this one takes other instances' too.
 */
class WaitingEvents {
  total = 0;
  readonly #ofForm = new Map<string, number>();

  stored(formId: string) {
    this.total++;
    this.#ofForm.set(formId, (this.#ofForm.get(formId) ?? 0) + 1);
  }

  relayed(formId: string) {
    const left = (this.#ofForm.get(formId) ?? 0) - 1;
    if (left > 0) this.#ofForm.set(formId, left);
    else this.#ofForm.delete(formId);
    this.total = Math.max(0, this.total - 1);
  }

  /** The most events of one form: one look at each form that has any waiting. */
  mostOfOneForm() {
    let most = 0;
    for (const count of this.#ofForm.values()) most = Math.max(most, count);
    return most;
  }
}
