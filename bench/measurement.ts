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
  /** The median run by throughput: what the tables show. */
  summary: LoadSummary;
  /**
   * Every run, in the order made. Runs compared side by side took turns: the i-th run of each
   * met the same stretch of machine noise, and targets pair them round by round.
   */
  runs: LoadSummary[];
}

export interface LoadTarget {
  server: RunningServer;
  /** The `api-key` header for formdeck; none for the servers that check no key. */
  headers: Record<string, string>;
  /** Keys sent in turn instead of the header's one (see LoadSpec.apiKeys). */
  apiKeys?: string[];
}

/** One series of runs: a scenario on one organization and one server. */
export interface RunSpec {
  scenario: string;
  forms: number | null;
  target: LoadTarget;
  request: LoadRequest;
  /** The run's connections; the options' (50) by default. */
  connections?: number;
  /** Runs after each run, before the next: work the run left behind in the background. */
  afterRun?: () => Promise<void>;
}

/** Runs that targets compare across servers or sizes: each made this many times, taking turns. */
export const ROUNDS = 3;

/**
 * Rounds of the list comparison that the key-check targets read: a share of 10 or 15 % is a
 * small difference between two servers, smaller than the pace of this machine moves from one
 * round to the next (three rounds read the Redis limiter's share anywhere from 3 to 26 %).
 */
export const KEY_CHECK_ROUNDS = 5;

/**
 * Seconds of load, not counted, that a server takes on a scenario before the scenario's first
 * compared round. V8 goes on compiling a server's paths for about 15 s of load: measured at a
 * fixed 1,200 submissions a second, formdeck's CPU per submission fell from 369 us to 210 us over
 * its first 20 s, the minimal handler's from 225 us to 130 us; a run's own warm-up of a few
 * seconds left the first rounds to measure the compiler, the larger server the more.
 */
export const FIRST_WARM_UP_SECONDS = 15;

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
  /** The servers and scenarios that have had their first warm-up. */
  const warmed = new Set<string>();
  const selects = (scenario: string) => options.only === null || scenario.includes(options.only);
  return {
    measurements,
    selects,
    /** One run, for figures no target compares. */
    async measure(spec: RunSpec): Promise<void> {
      await this.compare([spec], 1);
    },
    /**
     * The runs that targets compare: each series runs `rounds` times, the series taking turns,
     * so that a burst of noise on the machine meets every series, not one; each keeps its runs.
     */
    async compare(specs: readonly RunSpec[], rounds = ROUNDS): Promise<void> {
      const selected = specs.filter((spec) => selects(spec.scenario));
      const runs = selected.map((): LoadSummary[] => []);
      if (rounds > 1) for (const spec of selected) await warmUp(spec);
      for (let round = 0; round < rounds; round++) {
        for (const [i, spec] of selected.entries()) {
          runs[i]?.push(await runOnce(spec, rounds > 1 ? round + 1 : undefined));
        }
      }
      for (const [i, spec] of selected.entries()) {
        const series = runs[i] ?? [];
        const byThroughput = series.toSorted((a, b) => a.requestsPerSecond - b.requestsPerSecond);
        measurements.push({
          scenario: spec.scenario,
          forms: spec.forms,
          server: spec.target.server.name,
          connections: spec.connections ?? options.connections,
          summary: byThroughput[Math.floor(byThroughput.length / 2)] as LoadSummary,
          runs: series,
        });
      }
    },
  };

  /** The spec's load for `durationSeconds`, then a wait until the server has worked it off. */
  async function loadAndSettle(
    { target, request, connections }: RunSpec,
    durationSeconds: number,
    warmupSeconds: number,
  ): Promise<LoadSummary> {
    const summary = await runLoad({
      origin: target.server.origin,
      headers: target.headers,
      apiKeys: target.apiKeys,
      connections: connections ?? options.connections,
      durationSeconds,
      warmupSeconds,
      request,
    });
    await settle(target.server.origin, target.headers);
    return summary;
  }

  async function warmUp(spec: RunSpec): Promise<void> {
    const { scenario, target } = spec;
    const key = `${target.server.origin} ${scenario}`;
    if (warmed.has(key)) return;
    warmed.add(key);
    await loadAndSettle(spec, FIRST_WARM_UP_SECONDS, 0);
    await spec.afterRun?.();
    log(`${scenario} · ${target.server.name}: warmed up for ${FIRST_WARM_UP_SECONDS} s`);
  }

  async function runOnce(spec: RunSpec, round?: number): Promise<LoadSummary> {
    const { scenario, forms, target } = spec;
    const summary = await loadAndSettle(spec, options.durationSeconds, options.warmupSeconds);
    const { requestsPerSecond, latencyMs, non2xx, errors } = summary;
    log(
      `${scenario} · ${formsLabel(forms) || "-"} · ${target.server.name}` +
        `${round ? ` (round ${round})` : ""}: ` +
        `${requestsPerSecond} req/s, p50 ${milliseconds(latencyMs?.p50)} ms, ` +
        `p99 ${milliseconds(latencyMs?.p99)} ms` +
        (non2xx + errors > 0 ? `, ${non2xx} non-2xx, ${errors} errors` : ""),
    );
    await spec.afterRun?.();
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
