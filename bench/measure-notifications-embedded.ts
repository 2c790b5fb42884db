import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FORMS_PATH } from "./load-spec.ts";
import { embeddedTenant } from "./measure-embedded.ts";
import { apiKeyHeader, type Measurer, ROUNDS } from "./measurement.ts";
import {
  LATENCY_RATE,
  type LatencyRound,
  NOTIFICATION_SCENARIOS as N,
} from "./notification-scenarios.ts";
import {
  awaitArrivals,
  clearArrivals,
  createWebhooks,
  hookUrl,
  latencyRound,
  notificationEnv,
  runPacedIntake,
  startWebhookReceiver,
} from "./notification-tools.ts";
import type { BenchOptions } from "./options.ts";
import { type RunningServer, startFormdeckProcess } from "./servers.ts";

/** Forms the paced intake posts to in turn, each with a webhook. */
const FORMS = 10;

async function createForms(server: RunningServer, key: string, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${server.origin}${FORMS_PATH}`, {
      method: "POST",
      headers: { ...apiKeyHeader(key), "content-type": "application/json" },
      body: JSON.stringify({ name: `Bench form ${i}`, type: "endpoint" }),
    });
    if (response.status !== 201) throw new Error(`form create answered ${response.status}`);
    ids.push(((await response.json()) as { id: string }).id);
  }
  return ids;
}

/**
 * The delay from the intake's 201 to its event's arrival at the receiver on the embedded store
 * (PGlite): a formdeck server on a new DATA_DIR, its organization and key made through its admin
 * socket, forms and webhooks through the API, then LATENCY_RATE submissions a second, ROUNDS
 * rounds. Without SMTP_URL: emails are recorded skipped.
 */
export async function measureNotificationsEmbedded(
  options: BenchOptions,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<LatencyRound[]> {
  if (!measurer.selects(N.latency)) return [];
  const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-bench-notifications-"));
  const servers: RunningServer[] = [];
  try {
    const receiver = await startWebhookReceiver();
    servers.push(receiver);
    const formdeck = await startFormdeckProcess("formdeck embedded", "src/server.ts", {
      DATA_DIR: dataDir,
      ...notificationEnv(null),
    });
    servers.push(formdeck);
    const key = await embeddedTenant(dataDir, "bench notifications");
    const formIds = await createForms(formdeck, key, FORMS);
    await createWebhooks(formdeck, key, formIds, hookUrl(receiver));
    const rounds: LatencyRound[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await clearArrivals(receiver);
      const paced = await runPacedIntake({
        origin: formdeck.origin,
        formIds,
        ratePerSecond: LATENCY_RATE.embedded,
        durationSeconds: options.durationSeconds,
      });
      const arrivals = await awaitArrivals(receiver, paced.acknowledged.length);
      const result = latencyRound("embedded", LATENCY_RATE.embedded, paced, arrivals);
      log(
        `${N.latency}, embedded (round ${round}): ${result.arrived} of ${result.acknowledged} ` +
          `arrived, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms ` +
          `(the intake's p50 ${result.intakeP50Ms} ms)`,
      );
      rounds.push(result);
    }
    return rounds;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(dataDir, { recursive: true, force: true });
  }
}
