import type { PreparedPage } from "./html.ts";

/**
 * Rendered pages, kept per form and version (its updatedAt, and its owner's plan where the page
 * depends on it): a page is rendered once per change of its form, not per request. Bounded: past
 * `capacity`, the entry used least recently goes.
 */
export class PageCache {
  readonly #entries = new Map<string, { version: string; page: PreparedPage }>();
  readonly #capacity: number;

  constructor(capacity = 2_000) {
    this.#capacity = capacity;
  }

  get(key: string, version: string, render: () => PreparedPage): PreparedPage {
    const entry = this.#entries.get(key);
    if (entry && entry.version === version) {
      // Re-inserted: Map keeps insertion order, so the first key is the least recently used.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      return entry.page;
    }
    const page = render();
    this.#entries.delete(key);
    this.#entries.set(key, { version, page });
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return page;
  }
}
