/**
 * A map bounded to `capacity` entries: past it, the entry read or written least recently goes.
 * For what an instance keeps in memory per form (rendered pages, forms for the intake).
 */
export class LeastRecentlyUsed<Value> {
  readonly #entries = new Map<string, Value>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: string): Value | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      // Re-inserted: Map keeps insertion order, so the first key is the least recently used.
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: Value): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}
