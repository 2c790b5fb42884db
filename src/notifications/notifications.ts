import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import { type JobQueue, startJobQueue } from "../jobs/queue.ts";
import type { SpareCapacity } from "../jobs/spare-capacity.ts";
import { type HostLookup, systemLookup } from "../webhooks/address-guard.ts";
import type { DeliveryQueue } from "../webhooks/delivery-queue.ts";
import { deliveryQueueOn, startWebhookWorker } from "../webhooks/webhook-worker.ts";
import { NOTIFICATION_QUEUES } from "./queues.ts";
import { createSubmissionEvents, type SubmissionEvents } from "./submission-events.ts";

export interface Notifications {
  queue: JobQueue;
  /** For the intake: enqueues a submission's notifications in its transaction. */
  events: SubmissionEvents;
  /** For the API: the test event and redeliveries. */
  deliveryQueue: DeliveryQueue;
  /** Stops taking jobs; those running get `drainMs` to finish. */
  stop(drainMs: number): Promise<void>;
}

export interface NotificationsOptions {
  db: Database;
  config: Pick<
    Config,
    | "databaseUrl"
    | "smtpUrl"
    | "mailFrom"
    | "deliveryRetryDelaysSeconds"
    | "webhookAllowPrivateNetworks"
  >;
  log: Pick<FastifyBaseLogger, "warn" | "error">;
  /** How webhook hosts are resolved: the system's resolver unless a test gives its own. */
  webhookLookup?: HostLookup;
  /** What the workers' batches wait for: the server's requests come first (JobQueueOptions). */
  capacity?: SpareCapacity;
}

/** The job engine and this instance's workers for emails (and webhooks). */
export async function startNotifications(options: NotificationsOptions): Promise<Notifications> {
  const { db, config, log } = options;
  if (!config.smtpUrl) log.warn("SMTP_URL is not set: emails are recorded as skipped");
  const queue = await startJobQueue({
    db,
    log,
    databaseUrl: config.databaseUrl,
    queues: NOTIFICATION_QUEUES,
    ...(options.capacity ? { capacity: options.capacity } : {}),
  });
  // The mail library is loaded only by an instance that sends emails.
  const emails = config.smtpUrl
    ? await (await import("./email/email-worker.ts")).startEmailWorker({
        db,
        queue,
        log,
        smtpUrl: config.smtpUrl,
        retryDelaysSeconds: config.deliveryRetryDelaysSeconds,
      })
    : null;
  const webhooks = await startWebhookWorker({
    db,
    jobs: queue,
    policy: {
      lookup: options.webhookLookup ?? systemLookup,
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    },
    retryDelaysSeconds: config.deliveryRetryDelaysSeconds,
  });
  const events = createSubmissionEvents(queue, {
    smtpConfigured: config.smtpUrl !== null,
    mailFrom: config.mailFrom,
  });
  return {
    queue,
    events,
    deliveryQueue: deliveryQueueOn(queue),
    async stop(drainMs) {
      await queue.stop(drainMs);
      await webhooks.close();
      emails?.close();
    },
  };
}
