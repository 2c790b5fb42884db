import { runLoad, settle } from "./load-client.ts";
import type { LoadRequest, LoadSummary } from "./load-spec.ts";
import type { BenchOptions } from "./options.ts";
import type { RunningServer, ServerName } from "./servers.ts";

export interface Measurement {
  scenario: string;
  /** Forms of the organization measured; null where the data plays no part. */
  forms: number | null;
  server: ServerName;
  connections: number;
  summary: LoadSummary;
}

export interface LoadTarget {
  server: RunningServer;
  /** The `api-key` header for formdeck; none for the servers that check no key. */
  headers: Record<string, string>;
}

/** A latency as the tables show it; "-" when no response came back. */
export const milliseconds = (ms: number | undefined) => (ms === undefined ? "-" : ms.toFixed(1));

export const apiKeyHeader = (key: string) => ({ "api-key": key });

/** 100, 10k, 1M: how the tables name an organization size. */
export function formsLabel(forms: number | null): string {
  if (forms === null) return "";
  if (forms >= 1_000_000) return `${forms / 1_000_000}M`;
  if (forms >= 1_000) return `${forms / 1_000}k`;
  return String(forms);
}

/** Runs the load of each scenario that `--only` selects and keeps what it measured. */
export function createMeasurer(options: BenchOptions, log: (line: string) => void) {
  const measurements: Measurement[] = [];
  return {
    measurements,
    selects: (scenario: string) => options.only === null || scenario.includes(options.only),
    async measure(
      scenario: string,
      forms: number | null,
      target: LoadTarget,
      request: LoadRequest,
      connections = options.connections,
    ): Promise<void> {
      if (!this.selects(scenario)) return;
      const summary = await runOnce(scenario, forms, target, request, connections);
      measurements.push({ scenario, forms, server: target.server.name, connections, summary });
    },
    /**
     * The targets that compare servers rest on these: each server runs `rounds` times, taking
     * turns, and keeps its median run, so that a burst of noise on the machine during one run
     * does not decide a ratio.
     */
    async measureSideBySide(
      scenario: string,
      forms: number | null,
      runs: readonly { target: LoadTarget; request: LoadRequest }[],
      rounds = 3,
    ): Promise<void> {
      if (!this.selects(scenario)) return;
      const summaries = runs.map((): LoadSummary[] => []);
      for (let round = 0; round < rounds; round++) {
        for (const [i, { target, request }] of runs.entries()) {
          summaries[i]?.push(
            await runOnce(scenario, forms, target, request, options.connections, round + 1),
          );
        }
      }
      for (const [i, { target }] of runs.entries()) {
        const sorted = (summaries[i] ?? []).toSorted(
          (a, b) => a.requestsPerSecond - b.requestsPerSecond,
        );
        const summary = sorted[Math.floor(sorted.length / 2)] as LoadSummary;
        const server = target.server.name;
        measurements.push({ scenario, forms, server, connections: options.connections, summary });
      }
    },
  };

  async function runOnce(
    scenario: string,
    forms: number | null,
    target: LoadTarget,
    request: LoadRequest,
    connections: number,
    round?: number,
  ): Promise<LoadSummary> {
    const summary = await runLoad({
      origin: target.server.origin,
      headers: target.headers,
      connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      request,
    });
    await settle(target.server.origin, target.headers);
    const { requestsPerSecond, latencyMs, non2xx, errors } = summary;
    log(
      `${scenario} · ${formsLabel(forms) || "-"} · ${target.server.name}` +
        `${round ? ` (round ${round})` : ""}: ` +
        `${requestsPerSecond} req/s, p50 ${milliseconds(latencyMs?.p50)} ms, ` +
        `p99 ${milliseconds(latencyMs?.p99)} ms` +
        (non2xx + errors > 0 ? `, ${non2xx} non-2xx, ${errors} errors` : ""),
    );
    return summary;
  }
}

export type Measurer = ReturnType<typeof createMeasurer>;

/** The measurement of one scenario, size and server, if the run made it. */
export const findMeasurement = (
  measurements: readonly Measurement[],
  scenario: string,
  forms: number | null,
  server: ServerName,
) => measurements.find((m) => m.scenario === scenario && m.forms === forms && m.server === server);
