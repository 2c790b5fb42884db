import { readFileSync } from "node:fs";
import type { TestContext } from "node:test";
import { figure } from "../figures.ts";
import { type Reply, RequestFailure } from "./http-client.ts";

/** Nearest-rank percentile of `values` (need not be sorted); NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** What became of one request: its status, or `timeout`, or `network:<code>`. */
export function outcomeOf(result: Reply | RequestFailure): string {
  if (result instanceof RequestFailure) {
    return result.kind === "timeout" ? "timeout" : `network:${result.code}`;
  }
  return String(result.status);
}

/** Counts outcomes and keeps latencies, per operation. */
export class Tally {
  readonly outcomes = new Map<string, number>();
  readonly byOperation = new Map<string, { latencies: number[]; outcomes: Map<string, number> }>();

  record(operation: string, outcome: string, latencyMs: number) {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
    let entry = this.byOperation.get(operation);
    if (!entry) {
      entry = { latencies: [], outcomes: new Map() };
      this.byOperation.set(operation, entry);
    }
    entry.latencies.push(latencyMs);
    entry.outcomes.set(outcome, (entry.outcomes.get(outcome) ?? 0) + 1);
  }

  /** Records `result` (an answer or a failure) under `operation` and returns its outcome. */
  add(operation: string, result: Reply | RequestFailure): string {
    const outcome = outcomeOf(result);
    this.record(operation, outcome, result.latencyMs);
    return outcome;
  }

  get total() {
    let sum = 0;
    for (const n of this.outcomes.values()) sum += n;
    return sum;
  }

  count(predicate: (outcome: string) => boolean) {
    let sum = 0;
    for (const [outcome, n] of this.outcomes) if (predicate(outcome)) sum += n;
    return sum;
  }

  latencies(operation?: string): number[] {
    if (operation) return this.byOperation.get(operation)?.latencies ?? [];
    return [...this.byOperation.values()].flatMap((entry) => entry.latencies);
  }

  /** `200×12 201×3 timeout×0`-style summary of every outcome. */
  outcomeLine(outcomes: Map<string, number> = this.outcomes) {
    return (
      [...outcomes]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([outcome, n]) => `${outcome}×${n}`)
        .join(" ") || "none"
    );
  }

  /** One line per operation: count, outcomes, p50/p99/max latency. */
  operationLines(): string[] {
    return [...this.byOperation]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([operation, entry]) =>
          `${operation}: n=${entry.latencies.length} ${latencyLine(entry.latencies)} (${this.outcomeLine(entry.outcomes)})`,
      );
  }
}

export const latencyLine = (values: readonly number[]) =>
  `p50=${ms(percentile(values, 50))} p99=${ms(percentile(values, 99))} max=${ms(Math.max(...values))}`;

const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : "–");

/** Resident set size of process `pid` in MiB, from /proc; null where /proc is not there. */
export function rssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kib ? Math.round(Number(kib) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/** The figures every load run reports: requests and their rate, outcomes, each operation, RSS. */
export function reportLoad(
  t: TestContext,
  tally: Tally,
  elapsedS: number,
  rss: { start: number | null; end: number | null },
) {
  figure(
    t,
    "requests",
    `${tally.total} in ${elapsedS.toFixed(1)} s (${Math.round(tally.total / elapsedS)}/s)`,
  );
  figure(t, "outcomes", tally.outcomeLine());
  for (const line of tally.operationLines()) figure(t, "operation", line);
  figure(t, "server RSS", `${rss.start} MiB at start, ${rss.end} MiB at end`);
}
