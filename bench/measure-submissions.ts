import type { PostgresData } from "./measure-postgres.ts";
import { measureExport, measureLimitExact, measureRetention } from "./measure-sweeps.ts";
import { apiKeyHeader, type LoadTarget, type Measurer } from "./measurement.ts";
import type { BenchOptions } from "./options.ts";
import { prepareSubmissionsData, RARE_SUBMISSION_WORD } from "./seed-submissions.ts";
import { peakRssMb, type RunningServer, startFormdeck, startServer } from "./servers.ts";
import {
  emptyFigures,
  SUBMISSION_SCENARIOS as S,
  type SubmissionFigures,
  submissionsPath,
} from "./submission-scenarios.ts";

/**
 * The intake and the submissions API on PostgreSQL (issue 10): intake beside its baseline, into
 * one form with and without a limit, the limit's exactness, the list at `size` submissions
 * against 100 (`options.submissions`: a million unless BENCH_SUBMISSIONS says otherwise), a selective search, the CSV export and intake during a retention sweep of `size`
 * expired submissions. A formdeck server of its own takes the intake loads, so that its peak RSS
 * is the intake's.
 */
export async function measureSubmissions(
  data: PostgresData,
  options: BenchOptions,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<SubmissionFigures> {
  const figures = emptyFigures();
  const size = options.submissions;
  if (!Object.values(S).some((scenario) => measurer.selects(scenario))) return figures;
  const { databaseUrl, db } = data;
  const seeded = await prepareSubmissionsData(db, size, log);
  const servers: RunningServer[] = [];
  const started = async (starting: Promise<RunningServer>): Promise<LoadTarget> => {
    const server = await starting;
    servers.push(server);
    return { server, headers: {} };
  };
  try {
    const formdeck = await started(startFormdeck(databaseUrl));
    const minimal = await started(
      startServer("minimal handler", "bench/servers/minimal-intake.ts", {
        DATABASE_URL: databaseUrl,
      }),
    );
    const intake = (scenario: string, target: LoadTarget, formIds: string[]) => ({
      scenario,
      forms: null,
      target,
      request: { kind: "intake", formIds } as const,
    });
    // One comparison, so that the baseline and the three paths meet the same noise.
    await measurer.compare([
      intake(S.intakeSpread, formdeck, seeded.spreadIds),
      intake(S.intakeSpread, minimal, seeded.spreadIds),
      intake(S.intakeOneForm, formdeck, [seeded.oneId]),
      intake(S.intakeLimited, formdeck, [seeded.limitedId]),
    ]);
    if (measurer.selects(S.intakeLimitExact)) {
      figures.limitExact = await measureLimitExact(db, formdeck, seeded.organizationId, log);
    }
    if (measurer.measurements.some((m) => m.scenario.startsWith("intake"))) {
      figures.intakePeakRssMb = await peakRssMb(formdeck.server);
    }

    const reader = { ...formdeck, headers: apiKeyHeader(seeded.key) };
    const list = (forms: number, formId: string) => ({
      scenario: S.list,
      forms,
      target: reader,
      request: { kind: "get", path: submissionsPath(formId) } as const,
    });
    await measurer.compare([list(size, seeded.largeId), list(100, seeded.smallId)]);
    await measurer.measure({
      scenario: S.searchOneClient,
      forms: size,
      target: reader,
      request: {
        kind: "get",
        path: submissionsPath(seeded.largeId, `?search=${RARE_SUBMISSION_WORD}`),
      },
      connections: 1,
    });
    if (measurer.selects(S.exportCsv)) {
      const exporter = await started(startFormdeck(databaseUrl));
      figures.exports = await measureExport(
        { ...exporter, headers: apiKeyHeader(seeded.key) },
        seeded.largeId,
        size,
        log,
      );
    }
    if (measurer.selects(S.intakeDuringRetention)) {
      figures.sweepOutlastedRun = await measureRetention(
        { db, databaseUrl, options, measurer, log },
        seeded,
        size,
      );
    }
    return figures;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
