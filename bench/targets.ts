import { WRITES_ORGANIZATION_SIZE } from "./bench-organizations.ts";
import type { CheckResult } from "./checks.ts";
import { findMeasurement, formsLabel, type Measurement } from "./measurement.ts";
import { SCENARIOS } from "./scenarios.ts";

export interface TargetResult {
  name: string;
  measured: string;
  limit: string;
  /** SKIP: the run (--only, --sizes) did not measure what the target needs. */
  status: "PASS" | "FAIL" | "SKIP";
}

interface Target {
  name: string;
  limit: string;
  /** The measured value, null when the run did not measure it. */
  value: number | null;
  passes(value: number): boolean;
  show(value: number): string;
}

const MILLION = 1_000_000;
const times = (value: number) => `${value.toFixed(2)}×`;

function judge({ name, limit, value, passes, show }: Target): TargetResult {
  return value === null || !Number.isFinite(value)
    ? { name, limit, measured: "not measured", status: "SKIP" }
    : { name, limit, measured: show(value), status: passes(value) ? "PASS" : "FAIL" };
}

export function evaluateTargets(
  checks: readonly CheckResult[],
  measurements: readonly Measurement[],
  peakRssMb: number | null,
): TargetResult[] {
  const find = (scenario: string, forms: number | null, server: Measurement["server"]) =>
    findMeasurement(measurements, scenario, forms, server)?.summary ?? null;
  const throughputRatio = (scenario: string, forms: number | null) => {
    const formdeck = find(scenario, forms, "formdeck");
    const minimal = find(scenario, forms, "minimal handler");
    return formdeck && minimal ? formdeck.requestsPerSecond / minimal.requestsPerSecond : null;
  };
  const p50Growth = (scenario: string) => {
    const large = find(scenario, MILLION, "formdeck")?.latencyMs;
    const small = find(scenario, 100, "formdeck")?.latencyMs;
    return large && small ? large.p50 / small.p50 : null;
  };
  const list = find(SCENARIOS.listDefaults, 100, "formdeck");
  const withoutAuth = find(SCENARIOS.listDefaults, 100, "formdeck without auth");
  // The baselines' own timeouts (the minimal handler on a million forms) are theirs to have.
  const formdeckRuns = measurements.filter((m) => m.server.startsWith("formdeck"));
  const failedRuns = formdeckRuns.filter((m) => m.summary.non2xx + m.summary.errors > 0);

  const failedChecks = checks.filter((check) => !check.passed);
  const targets: Target[] = [
    {
      name: "correctness checks before load",
      limit: "all pass",
      value: checks.length > 0 ? failedChecks.length : null,
      passes: (v) => v === 0,
      show: (v) =>
        [`${v} of ${checks.length} failed`]
          .concat(failedChecks.map((check) => check.name))
          .join("; "),
    },
    {
      name: "list, 100 forms: req/s vs minimal handler",
      limit: "≥ 0.9×",
      value: throughputRatio(SCENARIOS.listDefaults, 100),
      passes: (v) => v >= 0.9,
      show: times,
    },
    {
      name: "list, 10,000 forms: req/s vs minimal handler",
      limit: "≥ 1.5×",
      value: throughputRatio(SCENARIOS.listDefaults, 10_000),
      passes: (v) => v >= 1.5,
      show: times,
    },
    {
      name: "list defaults: p50 at 1M forms vs at 100",
      limit: "≤ 1.5×",
      value: p50Growth(SCENARIOS.listDefaults),
      passes: (v) => v <= 1.5,
      show: times,
    },
    {
      name: "list type=hosted: p50 at 1M forms vs at 100",
      limit: "≤ 1.5×",
      value: p50Growth(SCENARIOS.listType),
      passes: (v) => v <= 1.5,
      show: times,
    },
    {
      name: "search, 1M forms, one client: p50",
      limit: "< 20 ms",
      value: find(SCENARIOS.listSearchOneClient, MILLION, "formdeck")?.latencyMs?.p50 ?? null,
      passes: (v) => v < 20,
      show: (v) => `${v.toFixed(1)} ms`,
    },
    {
      name: "create: req/s vs minimal handler",
      limit: "≥ 0.8×",
      value: throughputRatio(SCENARIOS.create, WRITES_ORGANIZATION_SIZE),
      passes: (v) => v >= 0.8,
      show: times,
    },
    {
      name: "update: req/s vs minimal handler",
      limit: "≥ 0.8×",
      value: throughputRatio(SCENARIOS.update, WRITES_ORGANIZATION_SIZE),
      passes: (v) => v >= 0.8,
      show: times,
    },
    {
      name: "key check + rate limit: share of a list request's time",
      limit: "≤ 10 %",
      // With 50 clients in a closed loop, a request costs the server 1 / throughput: the share of
      // that the key check and the rate limit take is the throughput formdeck loses to them.
      value:
        list && withoutAuth ? 1 - list.requestsPerSecond / withoutAuth.requestsPerSecond : null,
      passes: (v) => v <= 0.1,
      show: (v) => `${(v * 100).toFixed(1)} %`,
    },
    {
      name: "formdeck peak RSS under load",
      limit: "< 200 MB",
      value: peakRssMb,
      passes: (v) => v < 200,
      show: (v) => `${v.toFixed(0)} MB`,
    },
    {
      name: "formdeck runs with non-2xx answers or errors",
      limit: "none",
      value: formdeckRuns.length > 0 ? failedRuns.length : null,
      passes: (v) => v === 0,
      show: (v) =>
        [`${v} of ${formdeckRuns.length}`]
          .concat(failedRuns.map((m) => `${m.scenario} ${formsLabel(m.forms)} (${m.server})`))
          .join("; "),
    },
  ];
  return targets.map(judge);
}
