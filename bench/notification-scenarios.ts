/**
 * The scenarios of issue 13: notifications. `--only notifications` selects them all; the two
 * intake runs are load runs (Measurer), the deliveries and latencies figures of their own.
 */
export const NOTIFICATION_SCENARIOS = {
  intakeNotified: "notifications: intake with owner email and webhook",
  intakePlain: "notifications: intake without",
  deliveries: "notifications: webhook deliveries, backlog",
  latency: "notifications: 201 to receiver",
} as const;

/**
 * The steady intake under which the delay from a 201 to the receiver is measured, submissions a
 * second: on the embedded store, one connection takes the intake and the deliveries alike, and
 * at 100 a second with notifications the intake itself answers in 1 to 1.5 s on this machine.
 */
export const LATENCY_RATE = { PostgreSQL: 100, embedded: 20 } as const;

/** The deliveries of a backlog round: as many as 400 a second would make in a run. */
export const backlogSize = (durationSeconds: number) => Math.max(1_000, 400 * durationSeconds);

/** What bench/paced-intake.ts is given on its stdin. */
export interface PacedIntakeSpec {
  origin: string;
  formIds: string[];
  ratePerSecond: number;
  durationSeconds: number;
}

/** What it prints on its stdout. */
export interface PacedIntakeResult {
  /** Per 201: the submission id and when its answer had been read (ms, wall clock). */
  acknowledged: [string, number][];
  /** Per 201, in the same order: how long the intake took to answer it (ms). */
  intakeMs: number[];
  /** Answers other than 201, by status; "error" for requests that got none. */
  others: Record<string, number>;
}

/** One round of the backlog: `deliveries` enqueued at once, the receiver's arrival rate. */
export interface DeliveryRound {
  deliveries: number;
  arrived: number;
  /** Arrivals per second between the 10th and the 90th percentile of arrivals: sustained. */
  perSecond: number;
  /** From the backlog's commit to the last arrival. */
  seconds: number;
}

/** One round of paced intake: how long after its 201 each submission's event arrived. */
export interface LatencyRound {
  store: "PostgreSQL" | "embedded";
  ratePerSecond: number;
  acknowledged: number;
  /** The intake's own answer time, p50, for the 201s (ms). */
  intakeP50Ms: number | null;
  arrived: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  others: Record<string, number>;
}

export interface NotificationFigures {
  deliveries: DeliveryRound[];
  latencies: LatencyRound[];
  /** Seconds the workers took, after each notified intake run, to deliver what it left. */
  drainSeconds: number[];
}

export const emptyNotificationFigures = (): NotificationFigures => ({
  deliveries: [],
  latencies: [],
  drainSeconds: [],
});
