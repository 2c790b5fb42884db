import type { Database } from "../db/database.ts";
import type { KeyOwner } from "./api-keys.repository.ts";

/** The channel on which a revocation or a plan change is announced to every instance. */
export const KEY_CHANGES_CHANNEL = "formdeck_key_changes";

/** What a key change announces: the key, or every key of the organization. */
export const keyChange = {
  key: (keyId: string) => `key:${keyId}`,
  organization: (organizationId: string) => `org:${organizationId}`,
};

const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** Every cache of this process: a change made here reaches them before the change returns. */
const cachesOfThisProcess = new Set<KeyCache>();

export function announceInThisProcess(change: string) {
  for (const cache of cachesOfThisProcess) cache.forget(change);
}

/**
 * Remembers, for a few seconds, which organization a key hash belongs to, so that a request
 * does not wait for the database to learn it. A revocation or a plan change still wins: it is
 * announced to every cache, in this process directly and in others through NOTIFY, and a cache
 * that cannot hear announcements (its listening connection is down) answers nothing.
 */
export class KeyCache {
  #entries = new Map<string, { owner: KeyOwner; expiresAt: number }>();
  #listening = false;
  /** Moves on every announcement, so that a lookup racing one does not store a stale answer. */
  #generation = 0;
  #stopListening: () => Promise<void>;

  constructor(db: Database) {
    this.#stopListening = db.listen(KEY_CHANGES_CHANNEL, {
      message: (change) => this.forget(change),
      connected: () => {
        this.#startOver();
        this.#listening = true;
      },
      disconnected: () => {
        this.#listening = false;
        this.#startOver();
      },
    });
    cachesOfThisProcess.add(this);
  }

  /** The key's owner: from memory if known and fresh, else from `load`. */
  async owner(keyHash: string, load: () => Promise<KeyOwner | null>): Promise<KeyOwner | null> {
    const now = Date.now();
    const cached = this.#entries.get(keyHash);
    if (cached && cached.expiresAt > now) return cached.owner;
    if (!this.#listening) return load();
    const generation = this.#generation;
    const owner = await load();
    if (owner && this.#listening && generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(keyHash, { owner, expiresAt: now + TTL_MS });
    }
    return owner;
  }

  #startOver() {
    this.#generation++;
    this.#entries.clear();
  }

  forget(change: string) {
    this.#generation++;
    for (const [hash, { owner }] of this.#entries) {
      if (
        change === keyChange.key(owner.keyId) ||
        change === keyChange.organization(owner.organizationId)
      ) {
        this.#entries.delete(hash);
      }
    }
  }

  async close() {
    cachesOfThisProcess.delete(this);
    this.#entries.clear();
    await this.#stopListening();
  }
}
