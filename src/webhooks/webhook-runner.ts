import type { Dispatcher } from "undici";
import type { Database, Queryable } from "../db/database.ts";
import * as deliveries from "./deliveries.repository.ts";
import type { DeliveryJob, DeliveryQueue } from "./delivery-queue.ts";
import { signedHeaders } from "./signing.ts";
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, attemptDelivery } from "./webhook-attempt.ts";
import { refreshFormSummary } from "./webhooks.repository.ts";

export interface DeliveryRunner {
  db: Database;
  queue: DeliveryQueue;
  /** The SSRF-guarded dispatcher every attempt goes through. */
  dispatcher: Dispatcher;
  /** Waits after each failed scheduled attempt: 7 steps, 8 attempts in all. */
  retryDelaysMs: readonly number[];
  attemptTimeoutMs?: number;
}

type Outcome = Pick<deliveries.AttemptRecord, "status" | "nextAttemptAt"> & { gone: boolean };

/** Where the delivery stands after this attempt. */
function outcomeOf(
  job: DeliveryJob,
  result: AttemptResult,
  scheduledBefore: number,
  retryDelaysMs: readonly number[],
): Outcome {
  const { statusCode } = result;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    return { status: "succeeded", nextAttemptAt: null, gone: false };
  }
  if (statusCode === 410) return { status: "failed", nextAttemptAt: null, gone: true };
  if (job.kind === "redelivery") {
    // A redelivery of a delivery still on its schedule leaves the schedule as it was.
    return job.resume
      ? { status: "pending", nextAttemptAt: undefined, gone: false }
      : { status: "failed", nextAttemptAt: null, gone: false };
  }
  const step = retryDelaysMs[scheduledBefore];
  if (step === undefined) return { status: "failed", nextAttemptAt: null, gone: false };
  const end = result.at.getTime() + result.durationMs;
  const wait = Math.max(step, result.retryAfterMs ?? 0);
  return { status: "pending", nextAttemptAt: new Date(end + wait), gone: false };
}

/** The secrets that sign now: the current one, and the previous one within its day. */
function signingSecrets(work: deliveries.DeliveryWork, now: Date): string[] {
  const previousValid =
    work.previousSecret !== null &&
    work.previousSecretExpiresAt !== null &&
    work.previousSecretExpiresAt > now;
  return previousValid ? [work.secret, work.previousSecret as string] : [work.secret];
}

/**
 * Runs one job: one signed attempt, recorded with the delivery's new state, and the next
 * attempt enqueued in the same transaction. A job that finds its work done already (run again
 * after a crash, or the delivery ended meanwhile) does nothing.
 */
export async function runDeliveryJob(runner: DeliveryRunner, job: DeliveryJob): Promise<void> {
  const { db } = runner;
  const work = await deliveries.findDeliveryWork(db, job.deliveryId);
  if (!work) return;
  if (job.kind === "scheduled") {
    if (work.status !== "pending" || work.scheduledAttempts >= job.attempt) return;
    // A disabled webhook's deliveries stop; a test event goes whatever the switch says.
    if (!work.enabled && work.event !== "webhook.test") {
      await deliveries.stopDelivery(db, work.id);
      return;
    }
  }
  const now = new Date();
  const headers = signedHeaders(signingSecrets(work, now), work.eventId, now, work.body);
  const result = await attemptDelivery(
    runner.dispatcher,
    work.url,
    headers,
    work.body,
    runner.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
  );
  const outcome = outcomeOf(job, result, work.scheduledAttempts, runner.retryDelaysMs);
  const record = (q: Queryable) =>
    deliveries.recordAttempt(q, work.id, {
      attempt: {
        at: result.at.toISOString(),
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
      },
      scheduled: job.kind === "scheduled",
      status: outcome.status,
      nextAttemptAt: outcome.nextAttemptAt,
    });
  const next = job.kind === "scheduled" ? outcome.nextAttemptAt : null;
  // Most attempts end in one statement (a success, a final failure): no transaction to open.
  if (!outcome.gone && !next) {
    await record(db);
    return;
  }
  await db.transaction(async (tx) => {
    await record(tx);
    if (outcome.gone) {
      await deliveries.disableWebhook(tx, work.webhookId, new Date());
      await refreshFormSummary(tx, work.formId);
    }
    if (next) {
      await runner.queue.enqueue(
        tx,
        { deliveryId: work.id, kind: "scheduled", attempt: job.attempt + 1, resume: false },
        next,
      );
    }
  });
}
