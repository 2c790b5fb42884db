import { openDatabase, type Queryable } from "../src/db/database.ts";
import { startJobQueue } from "../src/jobs/queue.ts";
import { NOTIFICATION_QUEUES } from "../src/notifications/queues.ts";
import type { SubmissionRecord } from "../src/submissions/submissions.schemas.ts";
import { enqueueSubmissionEvents } from "../src/webhooks/webhook-events.ts";
import { deliveryQueueOn } from "../src/webhooks/webhook-worker.ts";
import type { DeliveryRound } from "./notification-scenarios.ts";
import { awaitArrivals, clearArrivals } from "./notification-tools.ts";
import type { RunningServer } from "./servers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Events not yet relayed, and deliveries and emails not yet final, of the organization. */
export async function pendingNotifications(db: Queryable, organizationId: string) {
  const [row] = await db.query<{ pending: number }>(
    `SELECT (SELECT count(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
              WHERE w.organization_id = $1 AND d.status = 'pending')::int
          + (SELECT count(*) FROM email_records e JOIN forms f ON f.id = e.form_id
              WHERE f.organization_id = $1 AND e.status = 'pending')::int
          + (SELECT count(*) FROM submission_events_outbox o JOIN forms f ON f.id = o.form_id
              WHERE f.organization_id = $1)::int AS pending`,
    [organizationId],
  );
  return row?.pending ?? 0;
}

/**
 * Waits until the workers have sent what the organization's submissions left pending (at most
 * `timeoutMs`), so that the next run starts on idle workers; resolves the seconds it took.
 */
export async function drainNotifications(
  db: Queryable,
  organizationId: string,
  timeoutMs = 300_000,
) {
  const started = performance.now();
  while ((await pendingNotifications(db, organizationId)) > 0) {
    if (performance.now() - started > timeoutMs) {
      throw new Error(`notifications still pending after ${timeoutMs / 1000} s`);
    }
    await sleep(250);
  }
  return (performance.now() - started) / 1000;
}

export interface BacklogForms {
  databaseUrl: string;
  /** The forms the events are spread over, each with one enabled webhook to the receiver. */
  forms: { id: string; name: string }[];
  /** The record every event carries (a real one, read through the API), its id changed. */
  sample: SubmissionRecord;
}

/**
 * Deliveries per second to the receiver: `count` submission events enqueued in one transaction
 * by the application's own code (as the intake enqueues them, one delivery each), committed at
 * once, and the receiver's arrivals counted. The rate is the one sustained between the 10th and
 * the 90th percentile of arrivals: neither the workers' first fetches nor the last stragglers.
 */
export async function measureBacklog(
  { databaseUrl, forms, sample }: BacklogForms,
  receiver: RunningServer,
  count: number,
  rounds: number,
  log: (line: string) => void,
): Promise<DeliveryRound[]> {
  const db = await openDatabase({ databaseUrl, dataDir: null });
  const jobs = await startJobQueue({
    db,
    log: { warn() {}, error() {} },
    databaseUrl,
    queues: NOTIFICATION_QUEUES,
  });
  const queue = deliveryQueueOn(jobs);
  const results: DeliveryRound[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      await clearArrivals(receiver);
      const events = Array.from({ length: count }, (_, i) => ({
        form: forms[i % forms.length] as { id: string; name: string },
        webhookEnabled: true,
        submission: { ...sample, id: `sub_backlog_${round}_${i}_${Date.now()}` },
      }));
      await db.transaction((tx) => enqueueSubmissionEvents(tx, queue, events));
      const committedAt = performance.timeOrigin + performance.now();
      const arrivals = await awaitArrivals(receiver, count);
      const times = arrivals.map(([, at]) => at).sort((a, b) => a - b);
      const from = Math.floor(times.length * 0.1);
      const to = Math.ceil(times.length * 0.9) - 1;
      const span = ((times[to] ?? 0) - (times[from] ?? 0)) / 1000;
      const result: DeliveryRound = {
        deliveries: count,
        arrived: new Set(arrivals.map(([id]) => id)).size,
        perSecond: span > 0 ? Math.round((to - from) / span) : 0,
        seconds: Math.round(((times.at(-1) ?? committedAt) - committedAt) / 100) / 10,
      };
      log(
        `webhook backlog (round ${round}): ${result.arrived} of ${count} arrived in ` +
          `${result.seconds} s, ${result.perSecond} deliveries/s sustained`,
      );
      results.push(result);
    }
    return results;
  } finally {
    await jobs.stop(1_000);
    await db.close();
  }
}
