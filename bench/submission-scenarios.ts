import { API_PREFIX } from "../src/http/api-prefix.ts";
import type { LoadSummary } from "./load-spec.ts";
import type { Measurement, Measurer } from "./measurement.ts";
import type { ServerName } from "./servers.ts";

/** The scenarios of issue 10: the intake and the submissions API. `--only intake` selects these. */
export const SUBMISSION_SCENARIOS = {
  intakeSpread: "intake, 100 forms",
  intakeOneForm: "intake, one form",
  intakeLimited: "intake, one form with limitResponses",
  intakeLimitExact: "intake, limit exact under load",
  intakeDuringRetention: "intake, retention sweeping",
  intakeBesideRetention: "intake, retention done",
  list: "submissions list",
  searchOneClient: "submissions search, one client",
  exportCsv: "submissions export csv",
} as const;

/** The limit of the exactness run: reached within a second at 50 connections. */
export const EXACT_LIMIT = 500;

export const submissionsPath = (formId: string, query = "") =>
  `${API_PREFIX}/forms/${formId}/submissions${query}`;

/** What the submissions scenarios measured beside the load runs. */
export interface SubmissionFigures {
  /** VmHWM of the formdeck server that took the intake loads, in MB. */
  intakePeakRssMb: number | null;
  limitExact: {
    limit: number;
    accepted: number;
    stored: number;
    counted: number;
    otherAnswers: Record<string, number>;
  } | null;
  exports: { rows: number; seconds: number; rowsPerSecond: number; rssGrowthMb: number }[];
  /** Per round: whether the sweep still ran when the run during it ended. */
  sweepOutlastedRun: boolean[];
}

export const emptyFigures = (): SubmissionFigures => ({
  intakePeakRssMb: null,
  limitExact: null,
  exports: [],
  sweepOutlastedRun: [],
});

/** Keeps runs made outside Measurer.compare (one server per round) as one measurement. */
export function keepSeries(
  measurer: Measurer,
  scenario: string,
  forms: number | null,
  server: ServerName,
  runs: LoadSummary[],
  connections: number,
) {
  if (runs.length === 0) return;
  const byThroughput = runs.toSorted((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const measurement: Measurement = {
    scenario,
    forms,
    server,
    connections,
    summary: byThroughput[Math.floor(byThroughput.length / 2)] as LoadSummary,
    runs,
  };
  measurer.measurements.push(measurement);
}
