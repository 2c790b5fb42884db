/**
 * How long uploads stay paced after other requests were last seen in flight: a client that sends
 * request after request has none in flight between its answer and its next request, and the
 * server sees a request only once it has read its head, which a busy server does late.
 */
const BUSY_AFTER_MS = 1_000;

/** The shortest wait of a reader whose turn has not come, so that waiting readers poll rarely. */
const MIN_TURN_WAIT_MS = 5;

/**
 * The longest an upload waits for its turn before it reads a chunk anyway, and the longest the
 * drained bodies together wait before one of them does: none waits forever.
 */
const TURN_PATIENCE_MS = 1_000;

/** One body's reader: asks after each chunk whether to wait before reading more. */
export interface PacedReader {
  /**
   * Counts `bytes` just read. When the reader must wait, returns a call that cancels the wait,
   * and calls `resume` once it may read again; null when it may go on at once.
   */
  waitAfter(bytes: number, resume: () => void): (() => void) | null;
}

/** An upload's reader, counted as an upload from its start until it is answered. */
export interface UploadTurn extends PacedReader {
  /** Its body is read: the next upload's turn to read first. */
  bodyRead(): void;
  /** Answered: no longer counted. */
  done(): void;
}

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
 *
 * While paced, the rate goes first to the upload that started first: the other uploads, then the
 * bodies drained after an early answer, read only what it leaves, once the allowance is full
 * again. So that none waits forever, an upload that waited a second reads a chunk anyway, and so
 * does one of the drained bodies each second: a burst of refused requests, whose number nothing
 * bounds, adds at most a chunk a second. Uploads so finish one after another rather than all
 * together at the end of a burst: each answered as soon as its own bytes are read, its budget
 * freed for the next, and the store's writes of their files spread over the burst instead of
 * meeting at its end.
 */
export class UploadPace {
  private readonly bytesPerSecond: number;
  private readonly requestsInFlight: () => number;
  private readonly burstBytes: number;
  private allowance: number;
  private refilledAt = performance.now();
  private busyUntil = 0;
  /** The uploads still reading their bodies, in the order they started. */
  private readonly reading = new Set<UploadTurn>();
  /**
   * Each upload counted, until answered: when it last read out of its turn, or started. A reader
   * not in it is a drained body's.
   */
  private readonly uploadReadAt = new Map<PacedReader, number>();
  /** When a drained body last read out of its turn. */
  private drainReadAt = performance.now();

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

  /** Counts a request as an upload, not one that uploads yield to, until its `done`. */
  countUpload(): UploadTurn {
    const turn: UploadTurn = {
      waitAfter: (bytes, resume) => this.waitAfter(bytes, turn, resume),
      bodyRead: () => this.reading.delete(turn),
      done: () => {
        this.reading.delete(turn);
        this.uploadReadAt.delete(turn);
      },
    };
    this.reading.add(turn);
    this.uploadReadAt.set(turn, performance.now());
    return turn;
  }

  /** The reader of a body drained after an early answer: it reads after the uploads. */
  drainReader(): PacedReader {
    const reader: PacedReader = {
      waitAfter: (bytes, resume) => this.waitAfter(bytes, reader, resume),
    };
    return reader;
  }

  /** Counts `bytes` just read by `reader`; the milliseconds to wait before reading more (0: go on). */
  delayAfter(bytes: number, reader: PacedReader): number {
    if (this.bytesPerSecond === 0) return 0;
    const now = performance.now();
    if (this.requestsInFlight() > this.uploadReadAt.size) this.busyUntil = now + BUSY_AFTER_MS;
    const refill = ((now - this.refilledAt) * this.bytesPerSecond) / 1000;
    this.allowance = Math.min(this.burstBytes, this.allowance + refill) - bytes;
    this.refilledAt = now;
    if (now >= this.busyUntil) {
      // Unpaced: what was read owes nothing to the next busy spell.
      this.allowance = Math.max(0, this.allowance);
      return 0;
    }
    const first = this.reading.values().next().value;
    if (first === undefined || reader === first) {
      return this.allowance >= 0 ? 0 : (-this.allowance / this.bytesPerSecond) * 1000;
    }
    // Not its turn: it reads what the first leaves, a full allowance, or a chunk once in a while.
    const uploadReadAt = this.uploadReadAt.get(reader);
    const lastRead = uploadReadAt ?? this.drainReadAt;
    if (this.allowance >= this.burstBytes) return 0;
    if (now - lastRead >= TURN_PATIENCE_MS) {
      if (uploadReadAt === undefined) this.drainReadAt = now;
      else this.uploadReadAt.set(reader, now);
      return 0;
    }
    const refilled = ((this.burstBytes - this.allowance) / this.bytesPerSecond) * 1000;
    const patience = lastRead + TURN_PATIENCE_MS - now;
    return Math.max(MIN_TURN_WAIT_MS, Math.min(refilled, patience));
  }

  private waitAfter(bytes: number, reader: PacedReader, resume: () => void) {
    let delay = this.delayAfter(bytes, reader);
    if (delay === 0) return null;
    let timer: NodeJS.Timeout;
    // Asked again when the wait is over: the turn or the allowance may have gone meanwhile.
    const retry = () => {
      delay = this.delayAfter(0, reader);
      if (delay === 0) resume();
      else timer = setTimeout(retry, delay);
    };
    timer = setTimeout(retry, delay);
    return () => clearTimeout(timer);
  }
}
