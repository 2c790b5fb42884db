import type { MachineInfo } from "./machine-info.ts";
import { findMeasurement, formsLabel, type Measurement, milliseconds } from "./measurement.ts";
import type { ServerName } from "./servers.ts";
import type { TargetResult } from "./targets.ts";

export interface Table {
  header: string[];
  rows: string[][];
  /** Columns aligned to the right in text (numbers). */
  numeric: boolean[];
}

const SERVER_ORDER: ServerName[] = [
  "formdeck",
  "formdeck with Redis",
  "formdeck without auth",
  "minimal handler",
  "runtime limit",
  "formdeck embedded",
];

/** Two decimals, or two significant digits for ratios far below 1 (formdeck vs runtime limit). */
function ratio(value: number, base: number | undefined): string {
  if (!base) return "";
  const r = value / base;
  return `${r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}×`;
}

/** Lowest to highest throughput of a measurement made over rounds; "" for a single run. */
function rpsSpread(m: Measurement): string {
  if (m.runs.length < 2) return "";
  const all = m.runs.map((run) => run.requestsPerSecond);
  return `${Math.min(...all)} to ${Math.max(...all)}`;
}

/**
 * One row per measurement (the median run of those made over rounds), grouped by scenario (in
 * the order run) and size, formdeck first.
 */
export function measurementsTable(measurements: readonly Measurement[]): Table {
  const scenarioOrder = [...new Set(measurements.map((m) => m.scenario))];
  const sorted = [...measurements].sort(
    (a, b) =>
      scenarioOrder.indexOf(a.scenario) - scenarioOrder.indexOf(b.scenario) ||
      (a.forms ?? 0) - (b.forms ?? 0) ||
      SERVER_ORDER.indexOf(a.server) - SERVER_ORDER.indexOf(b.server),
  );
  // The runtime limit that answered the same scenario's bytes, else the list's.
  const runtimeLimitOf = (scenario: string) =>
    (
      measurements.find((m) => m.server === "runtime limit" && m.scenario === scenario) ??
      measurements.find((m) => m.server === "runtime limit")
    )?.summary;
  const rows = sorted.map((m) => {
    const { requestsPerSecond: rps, latencyMs, non2xx, errors } = m.summary;
    const isFormdeck = m.server.startsWith("formdeck");
    const minimal =
      m.server === "formdeck"
        ? findMeasurement(measurements, m.scenario, m.forms, "minimal handler")?.summary
        : undefined;
    return [
      m.scenario,
      formsLabel(m.forms),
      m.server,
      String(rps),
      rpsSpread(m),
      milliseconds(latencyMs?.p50),
      milliseconds(latencyMs?.p99),
      String(non2xx),
      String(errors),
      ratio(rps, minimal?.requestsPerSecond),
      isFormdeck ? ratio(rps, runtimeLimitOf(m.scenario)?.requestsPerSecond) : "",
    ];
  });
  return {
    header: [
      "scenario",
      "forms",
      "server",
      "req/s",
      "rounds' req/s",
      "p50 ms",
      "p99 ms",
      "non-2xx",
      "errors",
      "vs minimal",
      "vs runtime limit",
    ],
    rows,
    numeric: [false, true, false, true, true, true, true, true, true, true, true],
  };
}

export function machineTable(machine: MachineInfo): Table {
  return {
    header: ["CPU", "cores", "memory", "OS", "Node", "PostgreSQL"],
    rows: [
      [
        machine.cpu,
        String(machine.cores),
        `${machine.memoryGb} GB`,
        machine.os,
        machine.node,
        machine.postgres,
      ],
    ],
    numeric: [false, true, true, false, false, false],
  };
}

export function targetsTable(targets: readonly TargetResult[]): Table {
  return {
    header: ["target", "limit", "median", "lowest to highest round", "result"],
    rows: targets.map((t) => [t.name, t.limit, t.measured, t.spread, t.status]),
    numeric: [false, false, false, false, false],
  };
}

const columnWidths = ({ header, rows }: Table, min: number) =>
  header.map((title, i) => Math.max(min, title.length, ...rows.map((r) => r[i]?.length ?? 0)));

const padded = (cell: string, width: number, right: boolean | undefined) =>
  right ? cell.padStart(width) : cell.padEnd(width);

export function textTable(table: Table): string {
  const widths = columnWidths(table, 0);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => padded(cell, widths[i] ?? 0, table.numeric[i]))
      .join("  ")
      .trimEnd();
  return [line(table.header), line(widths.map((w) => "-".repeat(w))), ...table.rows.map(line)].join(
    "\n",
  );
}

/** A Markdown table laid out the way Biome formats one, so that the repository's lint passes. */
export function markdownTable(table: Table): string {
  const widths = columnWidths(table, 3);
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => padded(cell, widths[i] ?? 0, table.numeric[i])).join(" | ")} |`;
  const rule = widths.map((w, i) => (table.numeric[i] ? `${"-".repeat(w - 1)}:` : "-".repeat(w)));
  return [line(table.header), `| ${rule.join(" | ")} |`, ...table.rows.map(line)].join("\n");
}
