import { LeastRecentlyUsed } from "../least-recently-used.ts";
import type { PreparedPage } from "./html.ts";

/**
 * Rendered pages, kept per form and version (its updatedAt, and its owner's plan where the page
 * depends on it): a page is rendered once per change of its form, not per request. Bounded: past
 * `capacity`, the entry used least recently goes.
 */
export class PageCache {
  readonly #entries: LeastRecentlyUsed<{ version: string; page: PreparedPage }>;

  constructor(capacity = 2_000) {
    this.#entries = new LeastRecentlyUsed(capacity);
  }

  get(key: string, version: string, render: () => PreparedPage): PreparedPage {
    const entry = this.#entries.get(key);
    if (entry && entry.version === version) return entry.page;
    const page = render();
    this.#entries.set(key, { version, page });
    return page;
  }
}
