// `npm run bench`: seeds the bench database, measures formdeck beside its baselines, checks the
// targets and writes the report. See docs/performance.md for what is measured and why.
import { type BenchReport, writeReport } from "./bench-report.ts";
import { evaluateHostedTargets } from "./hosted-targets.ts";
import { machineInfo } from "./machine-info.ts";
import { measureOnEmbeddedStore } from "./measure-embedded.ts";
import { measureHostedPage } from "./measure-hosted.ts";
import { measureNotifications } from "./measure-notifications.ts";
import { measureNotificationsEmbedded } from "./measure-notifications-embedded.ts";
import { measureOnPostgres } from "./measure-postgres.ts";
import { measureSubmissions } from "./measure-submissions.ts";
import { measureUploads, type UploadFigures } from "./measure-uploads.ts";
import { createMeasurer } from "./measurement.ts";
import type { NotificationFigures } from "./notification-scenarios.ts";
import { evaluateNotificationTargets } from "./notification-targets.ts";
import { type BenchOptions, isCompleteRun, parseOptions, USAGE, UsageError } from "./options.ts";
import { preparePostgres } from "./prepare-postgres.ts";
import { measurementsTable, targetsTable, textTable } from "./report-table.ts";
import { npmStartSettings } from "./servers.ts";
import type { SubmissionFigures } from "./submission-scenarios.ts";
import { evaluateSubmissionTargets } from "./submission-targets.ts";
import { evaluateTargets } from "./targets.ts";
import { evaluateUploadTargets } from "./upload-targets.ts";

const started = performance.now();
const log = (line: string) =>
  process.stderr.write(
    `[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`,
  );

async function bench(options: BenchOptions): Promise<boolean> {
  const startedAt = new Date().toISOString();
  const store = await preparePostgres(options, log);
  const measurer = createMeasurer(options, log);
  let postgres: Awaited<ReturnType<typeof measureOnPostgres>>;
  let machine: BenchReport["machine"];
  let submissions: SubmissionFigures;
  let uploads: UploadFigures;
  let notifications: NotificationFigures;
  try {
    machine = await machineInfo(store.db);
    postgres = await measureOnPostgres(store, measurer, log);
    submissions = await measureSubmissions(store, options, measurer, log);
    await measureHostedPage(store, measurer, log);
    uploads = await measureUploads(store, measurer.selects, log);
    notifications = await measureNotifications(store, options, measurer, log);
  } finally {
    await store.close();
  }
  const embedded = await measureOnEmbeddedStore(options, measurer, log);
  notifications.latencies.push(...(await measureNotificationsEmbedded(options, measurer, log)));

  const { measurements } = measurer;
  const targets = [
    ...evaluateTargets(postgres.checks, measurements, {
      formdeckMb: postgres.peakRssMb,
      embeddedFirstStartMb: embedded?.firstStartMb ?? null,
      embeddedRestartMb: embedded?.restartMb ?? null,
      embeddedCreationMb: embedded?.creation.peakRssMb ?? null,
    }),
    ...evaluateSubmissionTargets(measurements, submissions, options.submissions),
    ...evaluateHostedTargets(measurements),
    ...evaluateUploadTargets(uploads),
    ...evaluateNotificationTargets(measurements, notifications),
  ];
  const report: BenchReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine,
    settings: {
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      connections: options.connections,
      sizes: options.sizes.join(","),
      formdeckNodeFlags: await npmStartSettings(),
      only: options.only,
      submissions: options.submissions,
    },
    checks: postgres.checks,
    peakRssMb: {
      formdeck: postgres.peakRssMb,
      formdeckEmbeddedFirstStart: embedded?.firstStartMb ?? null,
      formdeckEmbeddedRestart: embedded?.restartMb ?? null,
      embeddedStoreCreation: embedded?.creation.peakRssMb ?? null,
    },
    submissions,
    uploads,
    notifications,
    targets,
    measurements,
  };
  const complete = isCompleteRun(options);
  const written = await writeReport(report, complete);

  process.stdout.write(`\n${textTable(measurementsTable(measurements))}\n\n`);
  process.stdout.write(`${textTable(targetsTable(targets))}\n\n`);
  if (embedded !== null) {
    process.stdout.write(
      `formdeck embedded peak RSS: ${embedded.firstStartMb.toFixed(0)} MB from its first start ` +
        `through seeding, ${embedded.restartMb.toFixed(0)} MB restarted, through its loads; ` +
        `the process that creates a new store ${embedded.creation.peakRssMb.toFixed(0)} MB ` +
        `for ${embedded.creation.seconds.toFixed(1)} s, once\n`,
    );
  }
  process.stdout.write(`written: ${written.join(", ")}\n`);
  if (!complete) {
    process.stdout.write("docs/performance.md is rewritten only by a run of everything.\n");
  }
  return targets.every((target) => target.status !== "FAIL");
}

try {
  const passed = await bench(parseOptions(process.argv.slice(2), process.env));
  log(passed ? "every target met" : "some targets failed");
  process.exit(passed ? 0 : 1);
} catch (error) {
  if (error instanceof UsageError) process.stderr.write(`${error.message}\n${USAGE}\n`);
  else process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : error}\n`);
  process.exit(1);
}
