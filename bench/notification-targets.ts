import { findMeasurement, type Measurement } from "./measurement.ts";
import {
  LATENCY_RATE,
  type LatencyRound,
  NOTIFICATION_SCENARIOS as N,
  type NotificationFigures,
} from "./notification-scenarios.ts";
import { ofRounds, ratioOf, single, throughput } from "./target-values.ts";
import { judge, type TargetResult } from "./targets.ts";

const ms = (value: number) => `${value.toFixed(0)} ms`;

const p50s = (rounds: readonly LatencyRound[], store: LatencyRound["store"]) =>
  rounds.flatMap((round) => (round.store === store && round.p50Ms !== null ? [round.p50Ms] : []));

/** The targets of issue 13: notifications off the request path, fast and complete. */
export function evaluateNotificationTargets(
  measurements: readonly Measurement[],
  figures: NotificationFigures,
): TargetResult[] {
  const notified = findMeasurement(measurements, N.intakeNotified, null, "formdeck");
  const plain = findMeasurement(measurements, N.intakePlain, null, "formdeck");
  const backlog = figures.deliveries[0]?.deliveries.toLocaleString("en") ?? "";
  const rounds = [...figures.deliveries, ...figures.latencies];
  const expected = rounds.reduce(
    (sum, round) => sum + ("deliveries" in round ? round.deliveries : round.acknowledged),
    0,
  );
  const arrived = rounds.reduce((sum, round) => sum + round.arrived, 0);
  return [
    judge({
      name: "intake, 100 forms, owner email + webhook: req/s vs without",
      limit: "≥ 0.8×",
      measured: ratioOf(notified, plain, throughput),
      passes: (v) => v >= 0.8,
      show: (v) => `${v.toFixed(2)}×`,
    }),
    judge({
      name: `webhook deliveries to a local receiver, PostgreSQL, backlog of ${backlog}: per second`,
      limit: "≥ 300",
      measured: ofRounds(figures.deliveries.map((round) => round.perSecond)),
      passes: (v) => v >= 300,
      show: (v) => v.toFixed(0),
    }),
    judge({
      name: `201 to receiver, PostgreSQL, ${LATENCY_RATE.PostgreSQL} submissions/s: p50`,
      limit: "< 200 ms",
      measured: ofRounds(p50s(figures.latencies, "PostgreSQL")),
      passes: (v) => v < 200,
      show: ms,
    }),
    judge({
      name: `201 to receiver, embedded, ${LATENCY_RATE.embedded} submissions/s: p50`,
      limit: "< 1,000 ms",
      measured: ofRounds(p50s(figures.latencies, "embedded")),
      passes: (v) => v < 1_000,
      show: ms,
    }),
    judge({
      name: "webhook events that never arrived (backlog and paced rounds)",
      limit: "none",
      measured: single(rounds.length > 0 ? expected - arrived : null),
      passes: (v) => v === 0,
      show: (v) => `${v} of ${expected}`,
    }),
  ];
}
