/**
 * The bytes of uploaded files that requests may hold in memory at once, across all requests. A
 * request reserves what its largest file could take before reading any file, and gives it back
 * when it is answered.
 */
export class UploadBudget {
  private reserved = 0;
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Reserves `bytes`; false, reserving nothing, when that would pass the limit. */
  reserve(bytes: number): boolean {
    if (this.reserved + bytes > this.limit) return false;
    this.reserved += bytes;
    return true;
  }

  release(bytes: number) {
    this.reserved -= bytes;
  }

  get inFlight(): number {
    return this.reserved;
  }
}
