/**
 * How long uploads stay paced after other requests were last seen in flight: a client that sends
 * request after request has none in flight between its answer and its next request, and the
 * server sees a request only once it has read its head, which a busy server does late.
 */
const BUSY_AFTER_MS = 1_000;

/**
 * How fast upload bodies are read while the instance serves other requests: at most
 * `bytesPerSecond` across every upload (and every body drained after an early answer), so that a
 * burst of uploads leaves the CPU, of this process and of the store, to the requests waiting
 * beside it. With nothing else in flight (nor within the last second), uploads are read as fast as
 * they arrive.
 *
 * A reader asks after each chunk how long to wait before reading more: the bytes read past the
 * rate, spread over the time the rate gives them. Readers share one allowance of a tenth of a
 * second's bytes, refilled at the rate, so that together they never pass it for longer than that.
 */
export class UploadPace {
  private readonly bytesPerSecond: number;
  private readonly requestsInFlight: () => number;
  private readonly burstBytes: number;
  private allowance: number;
  private refilledAt = performance.now();
  private uploads = 0;
  private busyUntil = 0;

  /**
   * `bytesPerSecond` 0: never paced. `requestsInFlight`: the instance's, uploads included (see
   * SpareCapacity).
   */
  constructor(bytesPerSecond: number, requestsInFlight: () => number) {
    this.bytesPerSecond = bytesPerSecond;
    this.requestsInFlight = requestsInFlight;
    this.burstBytes = bytesPerSecond / 10;
    this.allowance = this.burstBytes;
  }

  /** Counts a request as an upload, not one that uploads yield to, until the returned call. */
  countUpload(): () => void {
    this.uploads++;
    return () => {
      this.uploads--;
    };
  }

  /** Counts `bytes` just read; the milliseconds to wait before reading more (0: go on). */
  delayAfter(bytes: number): number {
    if (this.bytesPerSecond === 0) return 0;
    const now = performance.now();
    if (this.requestsInFlight() > this.uploads) this.busyUntil = now + BUSY_AFTER_MS;
    const refill = ((now - this.refilledAt) * this.bytesPerSecond) / 1000;
    this.allowance = Math.min(this.burstBytes, this.allowance + refill) - bytes;
    this.refilledAt = now;
    if (now >= this.busyUntil) {
      // Unpaced: what was read owes nothing to the next busy spell.
      this.allowance = Math.max(0, this.allowance);
      return 0;
    }
    return this.allowance >= 0 ? 0 : (-this.allowance / this.bytesPerSecond) * 1000;
  }
}
