import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import type { SubmissionRecord } from "../src/submissions/submissions.schemas.ts";
import type { PostgresData } from "./measure-postgres.ts";
import { apiKeyHeader, type Measurer, ROUNDS } from "./measurement.ts";
import { drainNotifications, measureBacklog } from "./notification-backlog.ts";
import {
  backlogSize,
  emptyNotificationFigures,
  LATENCY_RATE,
  NOTIFICATION_SCENARIOS as N,
  type NotificationFigures,
} from "./notification-scenarios.ts";
import {
  awaitArrivals,
  clearArrivals,
  createWebhooks,
  hookUrl,
  latencyRound,
  notificationEnv,
  runPacedIntake,
  startSmtpSink,
  startWebhookReceiver,
} from "./notification-tools.ts";
import type { BenchOptions } from "./options.ts";
import { addForm } from "./seed-submissions.ts";
import { type RunningServer, startFormdeckProcess } from "./servers.ts";

/** Forms each intake run posts to in turn: those with notifications, and as many without. */
const FORMS = 100;
const ORGANIZATION_NAME = "bench notifications";
/** Where owner emails go; the SMTP sink takes any address. */
const OWNER = "owner@formdeck.test";

/** One submission's record as the API returns it: the body every backlog event carries. */
async function sampleRecord(formdeck: RunningServer, key: string, formId: string) {
  const posted = await fetch(`${formdeck.origin}/f/${formId}`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ name: "Ada", email: "ada@example.com", message: "Hello" }),
  });
  const { id } = (await posted.json()) as { id: string };
  const read = await fetch(`${formdeck.origin}/api/v1/forms/${formId}/submissions/${id}`, {
    headers: apiKeyHeader(key),
  });
  if (read.status !== 200) throw new Error(`sample submission: ${read.status}`);
  return (await read.json()) as SubmissionRecord;
}

/**
 * Notifications on PostgreSQL (issue 13), with a webhook receiver and an SMTP sink in processes
 * of their own: the intake into forms with an owner email and a webhook beside the same intake
 * into forms without (the workers deliver what each run left before the next run starts); the
 * rate at which a backlog of deliveries reaches the receiver; and the delay from a 201 to its
 * event's arrival under a steady intake of LATENCY_RATE submissions a second.
 */
export async function measureNotifications(
  { databaseUrl, db }: PostgresData,
  options: BenchOptions,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<NotificationFigures> {
  const figures = emptyNotificationFigures();
  if (!Object.values(N).some((scenario) => measurer.selects(scenario))) return figures;
  await db.query("DELETE FROM organizations WHERE name = $1", [ORGANIZATION_NAME]);
  const org = await createOrganization(db, { name: ORGANIZATION_NAME, plan: "paid" });
  const { key } = await createApiKey(db, { organizationId: org.id, scope: "full", name: "bench" });
  const notified: string[] = [];
  const plain: string[] = [];
  for (let i = 0; i < FORMS; i++) {
    notified.push(await addForm(db, org.id, { emailsToNotify: [OWNER] }));
    plain.push(await addForm(db, org.id, {}));
  }
  const servers: RunningServer[] = [];
  const started = async (starting: Promise<RunningServer>) => {
    const server = await starting;
    servers.push(server);
    return server;
  };
  try {
    const receiver = await started(startWebhookReceiver());
    const smtpSink = await started(startSmtpSink());
    const formdeck = await started(
      startFormdeckProcess("formdeck", "src/server.ts", {
        DATABASE_URL: databaseUrl,
        ...notificationEnv(smtpSink),
      }),
    );
    await createWebhooks(formdeck, key, notified, hookUrl(receiver));
    const drained = async () => {
      const seconds = await drainNotifications(db, org.id);
      figures.drainSeconds.push(Math.round(seconds * 10) / 10);
      log(`notifications: the workers delivered what the run left in ${seconds.toFixed(1)} s`);
      await clearArrivals(receiver);
    };
    const intake = (scenario: string, formIds: string[], afterRun?: () => Promise<void>) => ({
      scenario,
      forms: null,
      target: { server: formdeck, headers: {} },
      request: { kind: "intake", formIds } as const,
      ...(afterRun ? { afterRun } : {}),
    });
    await measurer.compare([
      intake(N.intakeNotified, notified, drained),
      intake(N.intakePlain, plain),
    ]);

    if (measurer.selects(N.deliveries)) {
      const sample = await sampleRecord(formdeck, key, notified[0] as string);
      await drainNotifications(db, org.id);
      const forms = notified.map((id) => ({ id, name: "Bench form" }));
      const count = backlogSize(options.durationSeconds);
      figures.deliveries = await measureBacklog(
        { databaseUrl, forms, sample },
        receiver,
        count,
        ROUNDS,
        log,
      );
    }

    if (measurer.selects(N.latency)) {
      for (let round = 1; round <= ROUNDS; round++) {
        await drainNotifications(db, org.id);
        await clearArrivals(receiver);
        const paced = await runPacedIntake({
          origin: formdeck.origin,
          formIds: notified,
          ratePerSecond: LATENCY_RATE.PostgreSQL,
          durationSeconds: options.durationSeconds,
        });
        const arrivals = await awaitArrivals(receiver, paced.acknowledged.length);
        const result = latencyRound("PostgreSQL", LATENCY_RATE.PostgreSQL, paced, arrivals);
        log(
          `${N.latency}, PostgreSQL (round ${round}): ${result.arrived} of ` +
            `${result.acknowledged} arrived, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms ` +
            `(the intake's p50 ${result.intakeP50Ms} ms)`,
        );
        figures.latencies.push(result);
      }
    }
    return figures;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
