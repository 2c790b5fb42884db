import type { Database } from "../db/database.ts";
import type { JobQueue } from "../jobs/queue.ts";
import { WEBHOOK_QUEUE } from "../notifications/queues.ts";
import { type AddressPolicy, guardedAgent } from "./address-guard.ts";
import type { DeliveryJob, DeliveryQueue } from "./delivery-queue.ts";
import { ATTEMPT_TIMEOUT_MS } from "./webhook-attempt.ts";
import { runDeliveryJobs } from "./webhook-runner.ts";

/**
 * Attempts run at once on one instance: each mostly waits on a receiver, and the queue's
 * throughput target (300 deliveries a second) needs many in flight. They are fetched by 4
 * statements of 8: a receiver that hangs holds back at most 7 others of its fetch, for at most
 * the attempt's 15 s.
 */
const CONCURRENCY = 32;
const FETCHERS = 4;

/** Delivery attempts as jobs of the shared job engine. */
export function deliveryQueueOn(jobs: JobQueue): DeliveryQueue {
  return {
    enqueue: (tx, job, at) => jobs.enqueue(tx, WEBHOOK_QUEUE, job, at ? { startAfter: at } : {}),
    enqueueAll: (tx, batch) => jobs.enqueueAll(tx, WEBHOOK_QUEUE, batch),
  };
}

export interface WebhookWorkerOptions {
  db: Database;
  jobs: JobQueue;
  policy: AddressPolicy;
  retryDelaysSeconds: readonly number[];
}

/** Runs this instance's share of delivery attempts; the returned function closes its sockets. */
export async function startWebhookWorker(options: WebhookWorkerOptions) {
  const dispatcher = guardedAgent(options.policy, ATTEMPT_TIMEOUT_MS);
  const runner = {
    db: options.db,
    queue: deliveryQueueOn(options.jobs),
    dispatcher,
    retryDelaysMs: options.retryDelaysSeconds.map((seconds) => seconds * 1000),
  };
  await options.jobs.workInBatches<DeliveryJob>(
    WEBHOOK_QUEUE,
    (batch) => runDeliveryJobs(runner, batch),
    {
      concurrency: CONCURRENCY,
      fetchers: FETCHERS,
    },
  );
  return { close: () => dispatcher.close() };
}
