import type { LoadSummary } from "./load-spec.ts";
import type { Measurement } from "./measurement.ts";

/** A measured value: the median, and the lowest and highest of the rounds it comes from. */
export interface Measured {
  value: number;
  min?: number;
  max?: number;
  /** Shown instead of the spread, for a value made of parts that are not rounds. */
  note?: string;
}

const median = (values: readonly number[]) => {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** The median of per-round values, with their lowest and highest. */
export function ofRounds(values: readonly number[]): Measured | null {
  if (values.length === 0) return null;
  return {
    value: median(values),
    ...(values.length > 1 ? { min: Math.min(...values), max: Math.max(...values) } : {}),
  };
}

/**
 * `of(a) / of(b)` from the medians of two series that took turns, with the spread of the ratios
 * round by round (the i-th runs of both met the same stretch of the machine's noise).
 */
export function ratioOf(
  a: Measurement | undefined,
  b: Measurement | undefined,
  of: (run: LoadSummary) => number | undefined,
): Measured | null {
  if (!a || !b) return null;
  const values = (m: Measurement) => m.runs.map(of).filter((v): v is number => v !== undefined);
  return ratioOfRounds(values(a), values(b));
}

/** The same, from the per-round values of two series that took turns. */
export function ratioOfRounds(ofA: readonly number[], ofB: readonly number[]): Measured | null {
  if (ofA.length === 0 || ofB.length === 0) return null;
  const rounds = Math.min(ofA.length, ofB.length);
  const perRound = Array.from(
    { length: rounds },
    (_, i) => (ofA[i] as number) / (ofB[i] as number),
  );
  return {
    value: median(ofA) / median(ofB),
    ...(rounds > 1 ? { min: Math.min(...perRound), max: Math.max(...perRound) } : {}),
  };
}

export const throughput = (run: LoadSummary) => run.requestsPerSecond;
export const p50 = (run: LoadSummary) => run.latencyMs?.p50;

/** 1 − ratio, its spread turned around with it: the share of throughput lost. */
export const lostShare = (ratio: Measured | null): Measured | null =>
  ratio && {
    value: 1 - ratio.value,
    ...(ratio.max !== undefined && ratio.min !== undefined
      ? { min: 1 - ratio.max, max: 1 - ratio.min }
      : {}),
  };

export const single = (value: number | null | undefined): Measured | null =>
  value === null || value === undefined ? null : { value };
