import type { Dispatcher } from "undici";
import type { Database } from "../db/database.ts";
import { asError } from "../jobs/job-batches.ts";
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

/** An attempt's record that needs no transaction: written with those of the batch's others. */
interface LoneRecord {
  deliveryId: string;
  record: deliveries.AttemptRecord;
}

/**
 * Runs one job: one signed attempt, recorded with the delivery's new state, and the next
 * attempt enqueued in the same transaction. A job that finds its work done already (run again
 * after a crash, or the delivery ended meanwhile) does nothing. An attempt that needs no
 * transaction (most: a success, a final failure) is returned to be recorded with its batch's.
 */
async function runDeliveryJob(
  runner: DeliveryRunner,
  job: DeliveryJob,
  work: deliveries.DeliveryWork | undefined,
): Promise<LoneRecord | null> {
  const { db } = runner;
  if (!work) return null;
  if (job.kind === "scheduled") {
    if (work.status !== "pending" || work.scheduledAttempts >= job.attempt) return null;
    // A disabled webhook's deliveries stop; a test event goes whatever the switch says.
    if (!work.enabled && work.event !== "webhook.test") {
      await deliveries.stopDelivery(db, work.id);
      return null;
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
  const record: deliveries.AttemptRecord = {
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
  };
  const next = job.kind === "scheduled" ? outcome.nextAttemptAt : null;
  if (!outcome.gone && !next) return { deliveryId: work.id, record };
  await db.transaction(async (tx) => {
    await deliveries.recordAttempt(tx, work.id, record);
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
  return null;
}

/**
 * Runs the jobs of one fetch: their deliveries read in one statement, the attempts made at once,
 * and those that need no transaction recorded in one statement (a delivery with two jobs in the
 * batch, a redelivery beside its scheduled attempt, has its second recorded on its own). Answers
 * per job null, or the error that fails it.
 */
export async function runDeliveryJobs(
  runner: DeliveryRunner,
  jobs: readonly DeliveryJob[],
): Promise<(Error | null)[]> {
  const works = await deliveries.findDeliveriesWork(runner.db, [
    ...new Set(jobs.map((job) => job.deliveryId)),
  ]);
  const runs = await Promise.allSettled(
    jobs.map((job) => runDeliveryJob(runner, job, works.get(job.deliveryId))),
  );
  const outcomes = runs.map((run) => (run.status === "rejected" ? asError(run.reason) : null));
  const lone = runs.flatMap((run, index) =>
    run.status === "fulfilled" && run.value ? [{ index, ...run.value }] : [],
  );
  const firsts = lone.filter(
    (entry, i) => lone.findIndex((other) => other.deliveryId === entry.deliveryId) === i,
  );
  const seconds = lone.filter((entry) => !firsts.includes(entry));
  for (const group of [firsts, ...seconds.map((entry) => [entry])]) {
    try {
      await deliveries.recordAttempts(runner.db, group);
    } catch (error) {
      for (const entry of group) outcomes[entry.index] = asError(error);
    }
  }
  return outcomes;
}
