import { findMeasurement, type Measurement } from "./measurement.ts";
import { SUBMISSION_SCENARIOS as S, type SubmissionFigures } from "./submission-scenarios.ts";
import { type Measured, ofRounds, p50, ratioOf, single, throughput } from "./target-values.ts";
import { judge, type Target, type TargetResult } from "./targets.ts";

const times = (value: number) => `${value.toFixed(2)}×`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const mb = (value: number) => `${value.toFixed(0)} MB`;

const p99 = (run: { latencyMs: { p99: number } | null }) => run.latencyMs?.p99;

/** The targets of issue 10: the intake and the submissions API, on PostgreSQL. */
export function evaluateSubmissionTargets(
  measurements: readonly Measurement[],
  figures: SubmissionFigures,
  size: number,
): TargetResult[] {
  const formdeck = (scenario: string, forms: number | null = null) =>
    findMeasurement(measurements, scenario, forms, "formdeck");
  const spread = formdeck(S.intakeSpread);
  const baseline = findMeasurement(measurements, S.intakeSpread, null, "minimal handler");
  const atLeast = (name: string, limit: number, measured: Measured | null): Target => ({
    name,
    limit: `≥ ${limit.toFixed(1)}×`,
    measured,
    passes: (v) => v >= limit,
    show: times,
  });
  const below = (name: string, limit: number, measured: Measured | null, show = ms): Target => ({
    name,
    limit: `< ${show(limit)}`,
    measured,
    passes: (v) => v < limit,
    show,
  });
  const exact = figures.limitExact;
  const exactMisses =
    exact && [exact.accepted, exact.stored, exact.counted].filter((n) => n !== exact.limit);
  const exports = figures.exports;
  const sizeLabel = size >= 1_000_000 ? `${size / 1_000_000}M` : size.toLocaleString("en");
  const targets: Target[] = [
    atLeast(
      "intake, 100 forms: req/s vs minimal handler",
      0.8,
      ratioOf(spread, baseline, throughput),
    ),
    below(
      "intake, 100 forms: p99",
      50,
      ofRounds(spread?.runs.map(p99).filter((v) => v !== undefined) ?? []),
    ),
    atLeast(
      "intake, one form: req/s vs 100 forms",
      0.7,
      ratioOf(formdeck(S.intakeOneForm), spread, throughput),
    ),
    atLeast(
      "intake, one form with limitResponses: req/s vs 100 forms",
      0.3,
      ratioOf(formdeck(S.intakeLimited), spread, throughput),
    ),
    {
      name: "intake, limit exact under 50 connections: accepted, stored, counted",
      limit: "all = limit",
      measured: exact && {
        value: exactMisses?.length ?? 0,
        note: `limit ${exact.limit}: ${exact.accepted} accepted, ${exact.stored} stored, ${exact.counted} counted`,
      },
      passes: (v) => v === 0,
      show: (v) => (v === 0 ? "exact" : `${v} of 3 differ`),
    },
    {
      name: `submissions list: p50 at ${sizeLabel} submissions vs at 100`,
      limit: "≤ 1.5×",
      measured: ratioOf(formdeck(S.list, size), formdeck(S.list, 100), p50),
      passes: (v) => v <= 1.5,
      show: times,
    },
    below(
      `submissions search, ${sizeLabel} submissions, one client: p50`,
      20,
      single(formdeck(S.searchOneClient, size)?.summary.latencyMs?.p50),
    ),
    {
      name: `export, ${sizeLabel} submissions, CSV: rows/s`,
      limit: "≥ 50,000",
      measured: ofRounds(exports.map((run) => run.rowsPerSecond)),
      passes: (v) => v >= 50_000,
      show: (v) => Math.round(v).toLocaleString("en"),
    },
    below(
      "export, CSV: server RSS growth",
      50,
      ofRounds(exports.map((run) => run.rssGrowthMb)),
      mb,
    ),
    {
      name: `intake p99 while retention deletes ${sizeLabel} expired submissions vs after`,
      limit: "≤ 2.0×",
      measured: ratioOf(formdeck(S.intakeDuringRetention), formdeck(S.intakeBesideRetention), p99),
      passes: (v) => v <= 2,
      show: times,
    },
    below(
      "formdeck on PostgreSQL: peak RSS under intake load",
      200,
      single(figures.intakePeakRssMb),
      mb,
    ),
  ];
  return targets.map(judge);
}
