import { HOSTED_PAGE } from "./measure-hosted.ts";
import { findMeasurement, type Measurement } from "./measurement.ts";
import { ofRounds, ratioOf, throughput } from "./target-values.ts";
import { judge, type TargetResult } from "./targets.ts";

/** The targets of issue 12: the hosted page beside the runtime limit, on PostgreSQL. */
export function evaluateHostedTargets(measurements: readonly Measurement[]): TargetResult[] {
  const formdeck = findMeasurement(measurements, HOSTED_PAGE, null, "formdeck");
  const limit = findMeasurement(measurements, HOSTED_PAGE, null, "runtime limit");
  const p99s = formdeck?.runs.flatMap((run) => (run.latencyMs ? [run.latencyMs.p99] : [])) ?? [];
  const p99 = ofRounds(p99s);
  return [
    judge({
      name: `${HOSTED_PAGE}: req/s vs runtime limit serving the same bytes`,
      limit: "≥ 0.5×",
      measured: ratioOf(formdeck, limit, throughput),
      passes: (v) => v >= 0.5,
      show: (v) => `${v.toFixed(2)}×`,
    }),
    judge({
      name: `${HOSTED_PAGE}: p99 at 50 connections`,
      limit: "< 20 ms",
      measured: p99,
      passes: (v) => v < 20,
      show: (v) => `${v.toFixed(1)} ms`,
    }),
  ];
}
