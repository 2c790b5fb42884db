import { parseArgs } from "node:util";
import { DEFAULT_BENCH_DATABASE_URL } from "./bench-database.ts";

export const DEFAULT_BENCH_REDIS_URL = "redis://127.0.0.1:6379";

export const ALL_SIZES = [100, 10_000, 1_000_000] as const;

export interface BenchOptions {
  databaseUrl: string;
  /** The Redis that formdeck's Redis rate limiter runs against. */
  redisUrl: string;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** Organization sizes, ascending. */
  sizes: number[];
  /** Runs only scenarios whose name contains this. */
  only: string | null;
  reseed: boolean;
  /** Submissions of the form that the submissions list, search, export and retention read. */
  submissions: number;
}

export class UsageError extends Error {}

export const USAGE = `npm run bench [-- --only <text>] [--sizes 100,10000] [--reseed]
  --only <text>   run only the scenarios whose name contains <text> (e.g. "search", "create")
  --sizes <list>  organization sizes to seed and measure (default 100,10000,1000000)
  --reseed        seed the organizations again even if an earlier run left them
Environment: BENCH_DURATION (seconds per run, default 10),
  BENCH_DATABASE_URL (default ${DEFAULT_BENCH_DATABASE_URL}),
  BENCH_REDIS_URL (default ${DEFAULT_BENCH_REDIS_URL}),
  BENCH_SUBMISSIONS (submissions listed, exported and swept, default 1000000)`;

function parseSizes(raw: string): number[] {
  const sizes = raw.split(",").map((part) => Number(part.trim()));
  if (sizes.some((size) => !Number.isSafeInteger(size) || size < 5)) {
    throw new UsageError(`--sizes: integers of at least 5 separated by commas, got "${raw}"`);
  }
  return [...new Set(sizes)].sort((a, b) => a - b);
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  let values: { only?: string; sizes?: string; reseed?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { only: { type: "string" }, sizes: { type: "string" }, reseed: { type: "boolean" } },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const duration = Number(env.BENCH_DURATION ?? 10);
  if (!Number.isInteger(duration) || duration < 1) {
    throw new UsageError(`BENCH_DURATION: a whole number of seconds, got "${env.BENCH_DURATION}"`);
  }
  const submissions = Number(env.BENCH_SUBMISSIONS ?? 1_000_000);
  if (!Number.isSafeInteger(submissions) || submissions < 100) {
    throw new UsageError(
      `BENCH_SUBMISSIONS: an integer of at least 100, got "${env.BENCH_SUBMISSIONS}"`,
    );
  }
  return {
    databaseUrl: env.BENCH_DATABASE_URL || DEFAULT_BENCH_DATABASE_URL,
    redisUrl: env.BENCH_REDIS_URL || DEFAULT_BENCH_REDIS_URL,
    durationSeconds: duration,
    warmupSeconds: 2,
    connections: 50,
    sizes: values.sizes ? parseSizes(values.sizes) : [...ALL_SIZES],
    only: values.only ?? null,
    reseed: values.reseed ?? false,
    submissions,
  };
}

/** A run of every scenario at every size: only such a run rewrites docs/performance.md. */
export const isCompleteRun = (options: BenchOptions) =>
  options.only === null &&
  ALL_SIZES.every((size) => options.sizes.includes(size)) &&
  options.submissions >= 1_000_000;
