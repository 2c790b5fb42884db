import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CheckResult } from "./checks.ts";
import { projectRoot } from "./child-processes.ts";
import type { MachineInfo } from "./machine-info.ts";
import type { UploadFigures } from "./measure-uploads.ts";
import type { Measurement } from "./measurement.ts";
import type { NotificationFigures } from "./notification-scenarios.ts";
import { listLatencyChart } from "./report-chart.ts";
import { writePerformanceDoc } from "./report-docs.ts";
import type { SubmissionFigures } from "./submission-scenarios.ts";
import type { TargetResult } from "./targets.ts";

/** Everything a run produced: written as bench/results/<timestamp>.json. */
export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  settings: {
    durationSeconds: number;
    warmupSeconds: number;
    connections: number;
    /** As given to --sizes. */
    sizes: string;
    /** Environment and Node flags of the formdeck processes: those of `npm start`. */
    formdeckNodeFlags: string;
    only: string | null;
    /** Submissions of the form the list, search, export and retention runs read. */
    submissions: number;
  };
  checks: CheckResult[];
  /** Peak resident memory (VmHWM) of each formdeck server process, in MB. */
  peakRssMb: {
    formdeck: number | null;
    /** From its first start on a new DATA_DIR (migrations) through the seeding. */
    formdeckEmbeddedFirstStart: number | null;
    /** Restarted on that store, through the list, search and create loads. */
    formdeckEmbeddedRestart: number | null;
    /** The process that a first start runs once to create the store (initdb), measured alone. */
    embeddedStoreCreation?: number | null;
  };
  /** The submissions scenarios' figures that are not load runs (export, limit, peak RSS). */
  submissions: SubmissionFigures;
  /** The uploads scenarios' rounds (issue 11). */
  uploads: UploadFigures;
  /** The notifications scenarios' figures that are not load runs (backlog, latency, drains). */
  notifications: NotificationFigures;
  targets: TargetResult[];
  measurements: Measurement[];
}

const resultsDir = path.join(projectRoot, "bench/results");
const docsDir = path.join(projectRoot, "docs");
const DOCS_CHART = "performance-list-latency.svg";

/**
 * Writes the run's JSON and chart under bench/results; a complete run also rewrites
 * docs/performance.md and its chart. Returns the files written, relative to the project.
 */
export async function writeReport(report: BenchReport, complete: boolean): Promise<string[]> {
  await mkdir(resultsDir, { recursive: true });
  // Colons are not allowed in file names everywhere a clone may land.
  const stamp = report.startedAt.replace(/:/g, "-").replace(/\.\d+Z$/, "Z");
  const json = path.join(resultsDir, `${stamp}.json`);
  const chart = path.join(resultsDir, `${stamp}-list-latency.svg`);
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(chart, listLatencyChart(report.measurements, report.settings.connections));
  const written = [json, chart];
  if (complete) {
    await copyFile(chart, path.join(docsDir, DOCS_CHART));
    await writePerformanceDoc(path.join(docsDir, "performance.md"), report, DOCS_CHART);
    written.push(path.join(docsDir, DOCS_CHART), path.join(docsDir, "performance.md"));
  }
  return written.map((file) => path.relative(projectRoot, file));
}
