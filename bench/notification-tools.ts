import { startNode } from "./child-processes.ts";
import { apiKeyHeader } from "./measurement.ts";
import type { LatencyRound, PacedIntakeResult, PacedIntakeSpec } from "./notification-scenarios.ts";
import { type RunningServer, startServer } from "./servers.ts";

/** The webhook receiver (bench/servers/webhook-receiver.ts) in a process of its own. */
export const startWebhookReceiver = () =>
  startServer("webhook receiver", "bench/servers/webhook-receiver.ts", {});

/** The SMTP server that owner emails go to (bench/servers/smtp-sink.ts). */
export const startSmtpSink = () => startServer("SMTP sink", "bench/servers/smtp-sink.ts", {});

/** The settings that point a formdeck server's notifications at the bench's own processes. */
export const notificationEnv = (smtpSink: RunningServer | null) => ({
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  ...(smtpSink
    ? {
        SMTP_URL: `smtp://${new URL(smtpSink.origin).host}`,
        MAIL_FROM: "Formdeck bench <bench@formdeck.test>",
      }
    : {}),
});

export const hookUrl = (receiver: RunningServer) => `${receiver.origin}/hook`;

/** Per event the receiver got: the submission id and when it arrived (ms, wall clock). */
export async function receivedArrivals(receiver: RunningServer): Promise<[string, number][]> {
  const response = await fetch(`${receiver.origin}/arrivals`);
  return ((await response.json()) as { arrivals: [string, number][] }).arrivals;
}

export async function clearArrivals(receiver: RunningServer): Promise<void> {
  await (await fetch(`${receiver.origin}/arrivals`, { method: "DELETE" })).arrayBuffer();
}

/** Creates an enabled webhook to `url` on each form, through formdeck's API. */
export async function createWebhooks(
  formdeck: RunningServer,
  key: string,
  formIds: readonly string[],
  url: string,
) {
  for (const formId of formIds) {
    const response = await fetch(`${formdeck.origin}/api/v1/forms/${formId}/webhooks`, {
      method: "POST",
      headers: { ...apiKeyHeader(key), "content-type": "application/json" },
      body: JSON.stringify({ url }),
    });
    if (response.status !== 201) {
      throw new Error(`webhook create answered ${response.status}: ${await response.text()}`);
    }
  }
}

/** Runs bench/paced-intake.ts and returns what it printed. */
export async function runPacedIntake(spec: PacedIntakeSpec): Promise<PacedIntakeResult> {
  const child = startNode("bench/paced-intake.ts", process.env, {
    keepStdout: true,
    stdin: JSON.stringify(spec),
  });
  const code = await child.exited;
  if (code !== 0) throw new Error(`paced intake exited (${code}):\n${child.lastLines()}`);
  return JSON.parse(child.stdout()) as PacedIntakeResult;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the receiver holds `expected` arrivals, or until none came for `quietMs`; returns
 * the arrivals it has then.
 */
export async function awaitArrivals(receiver: RunningServer, expected: number, quietMs = 15_000) {
  let arrivals = await receivedArrivals(receiver);
  let lastChange = performance.now();
  while (arrivals.length < expected && performance.now() - lastChange < quietMs) {
    await sleep(250);
    const next = await receivedArrivals(receiver);
    if (next.length !== arrivals.length) lastChange = performance.now();
    arrivals = next;
  }
  return arrivals;
}

/** The value below which a share `q` of the sorted values lie (nearest rank). */
const percentile = (sorted: readonly number[], q: number) =>
  sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? null;

/** How long after its 201 each acknowledged submission's first event arrived. */
export function latencyRound(
  store: LatencyRound["store"],
  ratePerSecond: number,
  intake: PacedIntakeResult,
  arrivals: readonly [string, number][],
): LatencyRound {
  const firstArrival = new Map<string, number>();
  for (const [id, at] of arrivals) {
    if (!firstArrival.has(id)) firstArrival.set(id, at);
  }
  const delays = intake.acknowledged
    .flatMap(([id, acknowledgedAt]) => {
      const at = firstArrival.get(id);
      return at === undefined ? [] : [at - acknowledgedAt];
    })
    .sort((a, b) => a - b);
  const round = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);
  return {
    store,
    ratePerSecond,
    acknowledged: intake.acknowledged.length,
    intakeP50Ms: round(
      percentile(
        intake.intakeMs.toSorted((a, b) => a - b),
        0.5,
      ),
    ),
    arrived: delays.length,
    p50Ms: round(percentile(delays, 0.5)),
    p99Ms: round(percentile(delays, 0.99)),
    maxMs: round(delays.at(-1) ?? null),
    others: intake.others,
  };
}
