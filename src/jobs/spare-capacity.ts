/** How often the instance's load is sampled. */
const SAMPLE_MS = 100;
/**
 * Requests in flight from which the instance counts as saturated: requests are waiting on one
 * another (a paced 100 a second keeps one or two in flight here; a saturating load, dozens).
 */
const SATURATED_IN_FLIGHT = 16;
/**
 * The longest background work waits for spare capacity: under a load that never lets up it still
 * goes on, a batch per fetcher a second at least.
 */
const MAX_WAIT_MS = 1_000;

export interface SpareCapacity {
  /** Counts a request in flight until its response closes: the HTTP server's `request` event. */
  track(response: { once(event: "close", listener: () => void): unknown }): void;
  /** Resolves at once unless requests saturate the instance; then when they ease, or in 1 s. */
  wait(): Promise<void>;
  /** Whether the latest sample found the instance saturated. */
  readonly saturated: boolean;
  /** Requests in flight now. */
  readonly inFlight: number;
  stop(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Background work (notifications) yields to requests: while requests pile up in flight, each
 * batch of jobs waits for a sample in which they do not, for at most a second. On a saturated
 * instance the intake keeps the CPU its 201s need, and the jobs catch up once the load eases; at
 * any load the instance keeps up with, nothing waits.
 */
export function spareCapacity(): SpareCapacity {
  let inFlight = 0;
  let saturated = false;
  const ended = () => {
    inFlight--;
  };
  const sampler = setInterval(() => {
    saturated = inFlight >= SATURATED_IN_FLIGHT;
  }, SAMPLE_MS);
  sampler.unref();
  return {
    track(response) {
      inFlight++;
      response.once("close", ended);
    },
    async wait() {
      const started = performance.now();
      while (saturated && performance.now() - started < MAX_WAIT_MS) await sleep(SAMPLE_MS);
    },
    get saturated() {
      return saturated;
    },
    get inFlight() {
      return inFlight;
    },
    stop: () => clearInterval(sampler),
  };
}

/** For queues whose work never waits (tests, tools). */
export const alwaysSpare: SpareCapacity = {
  track() {},
  wait: async () => {},
  saturated: false,
  inFlight: 0,
  stop() {},
};
