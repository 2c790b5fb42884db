import type { UploadFigures } from "./measure-uploads.ts";
import { type Measured, ratioOfRounds } from "./target-values.ts";
import { judge, type TargetResult } from "./targets.ts";

const times = (value: number) => `${value.toFixed(2)}×`;
const mb = (value: number) => `${value.toFixed(0)} MB`;
const peak = (value: number | null | undefined): Measured | null =>
  value === null || value === undefined ? null : { value };

/** The targets of issue 11: uploads and downloads of files. */
export function evaluateUploadTargets(figures: UploadFigures): TargetResult[] {
  const { burstRounds: bursts, downloadRounds: downloads, intake, embeddedBurst } = figures;
  return [
    judge({
      name: "uploads: forms list p99 during 50 × 10 MB uploads vs idle",
      limit: "≤ 2.0×",
      measured: ratioOfRounds(
        bursts.map((round) => round.duringP99Ms),
        bursts.map((round) => round.idleP99Ms),
      ),
      passes: (v) => v <= 2,
      show: times,
    }),
    judge({
      name: "uploads: peak RSS through 50 × 10 MB uploads, PostgreSQL",
      limit: "< 300 MB",
      measured: peak(figures.burstPeakRssMb),
      passes: (v) => v < 300,
      show: mb,
    }),
    judge({
      name: "uploads: peak RSS through 50 × 10 MB uploads, embedded store",
      limit: "< 300 MB",
      measured: peak(embeddedBurst?.peakRssMb),
      passes: (v) => v < 300,
      show: mb,
    }),
    judge({
      name: "downloads, 10 MB, 4 connections: MB/s vs plain node:http handler",
      limit: "≥ 0.8×",
      measured: ratioOfRounds(
        downloads.map((round) => round.formdeckMbps),
        downloads.map((round) => round.plainMbps),
      ),
      passes: (v) => v >= 0.8,
      show: times,
    }),
    judge({
      name: "uploads: PNG re-encoded, 20 connections: uploads/s (p99, RSS in the note)",
      limit: "reported",
      measured: intake && {
        value: intake.uploadsPerSecond,
        note: `PNG of ${(intake.pngBytes / 1e6).toFixed(2)} MB; p99 ${intake.p99Ms.toFixed(0)} ms; server peak RSS ${intake.peakRssMb.toFixed(0)} MB`,
      },
      passes: () => true,
      show: (v) => `${v.toFixed(1)}/s`,
    }),
  ];
}
