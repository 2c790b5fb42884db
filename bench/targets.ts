import { WRITES_ORGANIZATION_SIZE } from "./bench-organizations.ts";
import type { CheckResult } from "./checks.ts";
import type { LoadSummary } from "./load-spec.ts";
import { findMeasurement, formsLabel, type Measurement } from "./measurement.ts";
import { SCENARIOS } from "./scenarios.ts";
import type { ServerName } from "./servers.ts";
import { lostShare, type Measured, p50, ratioOf, single, throughput } from "./target-values.ts";

export interface TargetResult {
  name: string;
  measured: string;
  /** Lowest and highest of the rounds, for targets measured over rounds; "" otherwise. */
  spread: string;
  limit: string;
  /** SKIP: the run (--only, --sizes) did not measure what the target needs. */
  status: "PASS" | "FAIL" | "SKIP";
}

export interface Target {
  name: string;
  limit: string;
  /** Null when the run did not measure it. */
  measured: Measured | null;
  passes(value: number): boolean;
  show(value: number): string;
}

export interface PeakRss {
  /** formdeck on PostgreSQL, over all its runs. */
  formdeckMb: number | null;
  /** formdeck on the embedded store: its first start on a new DATA_DIR, through the seeding. */
  embeddedFirstStartMb: number | null;
  /** The same store restarted, through its loads. */
  embeddedRestartMb: number | null;
  /** The process that creates a new store, before the first start opens it (not judged). */
  embeddedCreationMb: number | null;
}

const MILLION = 1_000_000;
const times = (value: number) => `${value.toFixed(2)}×`;
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

/** The higher of the two embedded peaks; the spread column shows both. */
function embeddedPeak({
  embeddedFirstStartMb: first,
  embeddedRestartMb: restart,
  embeddedCreationMb: creation,
}: PeakRss) {
  if (first === null || restart === null) return null;
  const created = creation === null ? "" : `; creating the store ${creation.toFixed(0)} MB, once`;
  const note = `first start ${first.toFixed(0)} MB, restart ${restart.toFixed(0)} MB${created}`;
  return { value: Math.max(first, restart), note };
}

export function judge({ name, limit, measured, passes, show }: Target): TargetResult {
  if (measured === null || !Number.isFinite(measured.value)) {
    return { name, limit, measured: "not measured", spread: "", status: "SKIP" };
  }
  const { value, min, max, note } = measured;
  return {
    name,
    limit,
    measured: show(value),
    spread: note ?? (min === undefined || max === undefined ? "" : `${show(min)} to ${show(max)}`),
    status: passes(value) ? "PASS" : "FAIL",
  };
}

export function evaluateTargets(
  checks: readonly CheckResult[],
  measurements: readonly Measurement[],
  peakRss: PeakRss,
): TargetResult[] {
  const find = (scenario: string, forms: number | null, server: ServerName) =>
    findMeasurement(measurements, scenario, forms, server);
  const vsMinimal = (scenario: string, forms: number | null) =>
    ratioOf(
      find(scenario, forms, "formdeck"),
      find(scenario, forms, "minimal handler"),
      throughput,
    );
  const p50Growth = (scenario: string) =>
    ratioOf(find(scenario, MILLION, "formdeck"), find(scenario, 100, "formdeck"), p50);
  const withoutAuth = find(SCENARIOS.listDefaults, 100, "formdeck without auth");
  // With 50 clients in a closed loop, a request costs the server 1 / throughput: the share of
  // that the key check and the rate limit take is the throughput formdeck loses to them.
  const keyCheckShare = (formdeck: Measurement | undefined) =>
    lostShare(ratioOf(formdeck, withoutAuth, throughput));
  // The baselines' own timeouts (the minimal handler on a million forms) are theirs to have.
  const formdeckRuns = measurements.filter((m) => m.server.startsWith("formdeck"));
  // A 429 here is an expensive list's turn (src/forms/expensive-lists.ts: at most 2 searches or
  // deep pages of an organization at once), the quota being out of reach: a refusal as designed,
  // shown apart from failures.
  const turns = (run: LoadSummary) => run.statusCodes["429"] ?? 0;
  const failedRuns = formdeckRuns.filter((m) =>
    m.runs.some((run) => run.non2xx - turns(run) + run.errors > 0),
  );
  const turnedRuns = formdeckRuns.filter((m) => m.runs.some((run) => turns(run) > 0));
  const writes = WRITES_ORGANIZATION_SIZE;

  const failedChecks = checks.filter((check) => !check.passed);
  const atLeast = (name: string, limit: number, measured: Measured | null): Target => ({
    name,
    limit: `≥ ${limit.toFixed(1)}×`,
    measured,
    passes: (v) => v >= limit,
    show: times,
  });
  const atMostShare = (name: string, limit: number, measured: Measured | null): Target => ({
    name,
    limit: `≤ ${limit * 100} %`,
    measured,
    passes: (v) => v <= limit,
    show: percent,
  });
  const targets: Target[] = [
    {
      name: "correctness checks before load",
      limit: "all pass",
      measured: single(checks.length > 0 ? failedChecks.length : null),
      passes: (v) => v === 0,
      show: (v) =>
        [`${v} of ${checks.length} failed`]
          .concat(failedChecks.map((check) => check.name))
          .join("; "),
    },
    atLeast(
      "list, 100 forms: req/s vs minimal handler",
      1.0,
      vsMinimal(SCENARIOS.listDefaults, 100),
    ),
    atLeast(
      "list, 10,000 forms: req/s vs minimal handler",
      1.5,
      vsMinimal(SCENARIOS.listDefaults, 10_000),
    ),
    {
      name: "list defaults: p50 at 1M forms vs at 100",
      limit: "≤ 1.5×",
      measured: p50Growth(SCENARIOS.listDefaults),
      passes: (v) => v <= 1.5,
      show: times,
    },
    {
      name: "list type=hosted: p50 at 1M forms vs at 100",
      limit: "≤ 1.5×",
      measured: p50Growth(SCENARIOS.listType),
      passes: (v) => v <= 1.5,
      show: times,
    },
    {
      name: "search, 1M forms, one client: p50",
      limit: "< 20 ms",
      measured: single(
        find(SCENARIOS.listSearchOneClient, MILLION, "formdeck")?.summary.latencyMs?.p50,
      ),
      passes: (v) => v < 20,
      show: (v) => `${v.toFixed(1)} ms`,
    },
    atLeast("create: req/s vs minimal handler", 1.0, vsMinimal(SCENARIOS.create, writes)),
    atLeast(
      "create with Idempotency-Key: req/s vs create without",
      0.7,
      ratioOf(
        find(SCENARIOS.createIdempotent, writes, "formdeck"),
        find(SCENARIOS.create, writes, "formdeck"),
        throughput,
      ),
    ),
    atLeast("update (name): req/s vs minimal handler", 1.0, vsMinimal(SCENARIOS.update, writes)),
    atLeast(
      "update isClosed: req/s vs minimal handler",
      0.8,
      vsMinimal(SCENARIOS.updateClose, writes),
    ),
    atLeast(
      "update auto-close: req/s vs minimal handler",
      0.8,
      vsMinimal(SCENARIOS.updateAutoClose, writes),
    ),
    atLeast(
      "update one form, 50 connections: req/s vs minimal handler",
      0.8,
      vsMinimal(SCENARIOS.updateOneForm, writes),
    ),
    atMostShare(
      "key check + rate limit, one key, in-process limiter: share of a list request",
      0.1,
      keyCheckShare(find(SCENARIOS.listDefaults, 100, "formdeck")),
    ),
    atMostShare(
      "key check + rate limit, Redis limiter: share of a list request",
      0.15,
      keyCheckShare(find(SCENARIOS.listDefaults, 100, "formdeck with Redis")),
    ),
    atMostShare(
      "key check + rate limit, 1,000 keys in turn: share of a list request",
      0.15,
      keyCheckShare(find(SCENARIOS.listManyKeys, 100, "formdeck")),
    ),
    {
      name: "formdeck on PostgreSQL: peak RSS under load",
      limit: "< 200 MB",
      measured: single(peakRss.formdeckMb),
      passes: (v) => v < 200,
      show: (v) => `${v.toFixed(0)} MB`,
    },
    {
      name: "formdeck embedded: peak RSS, first start and restart, through the loads",
      limit: "< 250 MB",
      measured: embeddedPeak(peakRss),
      passes: (v) => v < 250,
      show: (v) => `${v.toFixed(0)} MB`,
    },
    {
      name: "formdeck runs with errors or non-2xx answers (an expensive list's 429 turn aside)",
      limit: "none",
      measured: single(formdeckRuns.length > 0 ? failedRuns.length : null),
      passes: (v) => v === 0,
      show: (v) =>
        [`${v} of ${formdeckRuns.length}`]
          .concat(failedRuns.map((m) => `${m.scenario} ${formsLabel(m.forms)} (${m.server})`))
          .concat(
            turnedRuns.map(
              (m) =>
                `429 turns: ${m.scenario} ${formsLabel(m.forms)} ` +
                `(${m.runs.reduce((sum, run) => sum + turns(run), 0)})`,
            ),
          )
          .join("; "),
    },
  ];
  return targets.map(judge);
}
