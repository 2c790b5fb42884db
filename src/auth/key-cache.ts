import { type Database, listenerCount, type Queryable } from "../db/database.ts";
import type { KeyOwner } from "./api-keys.repository.ts";

/** The channel on which a revocation or a plan change is announced to every instance. */
export const KEY_CHANGES_CHANNEL = "formdeck_key_changes";
/** The channel on which each instance confirms that it has dropped what a change named. */
const KEY_CHANGES_DONE_CHANNEL = "formdeck_key_changes_done";
/** How long a change waits for the instances to confirm; one that hangs cannot hold it longer. */
const CONFIRM_TIMEOUT_MS = 2_000;

/** What a key change announces: the key, or every key of the organization. */
export const keyChange = {
  key: (keyId: string) => `key:${keyId}`,
  organization: (organizationId: string) => `org:${organizationId}`,
};

const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** Whatever keeps something a key change can make stale: a key cache, the hosted pages' forms. */
export interface KeyChangeListener {
  forget(change: string): void;
}

/** Every cache of this process: a change made here reaches them before the change returns. */
const cachesOfThisProcess = new Set<KeyChangeListener>();

/** Hears the key changes made in this process until the returned function is called. */
export function hearKeyChangesOfThisProcess(listener: KeyChangeListener): () => void {
  cachesOfThisProcess.add(listener);
  return () => cachesOfThisProcess.delete(listener);
}

/** Tells the instance that announced `change` that this listener has dropped what it names. */
export async function confirmKeyChange(db: Database, change: string): Promise<void> {
  if (db.kind !== "postgres") return;
  await db.query("SELECT pg_notify($1, $2)", [KEY_CHANGES_DONE_CHANNEL, change]);
}

function announceInThisProcess(change: string) {
  for (const cache of cachesOfThisProcess) cache.forget(change);
}

/**
 * Runs `write`, which changes a key or a plan and sends `change` with NOTIFY in the same
 * statement, and returns once every cache has dropped what it names: in this process at once,
 * and in every other instance when it confirms (or after a short timeout, for one that hangs).
 * So the next request anywhere sees the change.
 */
export async function announceKeyChange<T>(
  db: Queryable | Database,
  change: string,
  write: () => Promise<T>,
): Promise<T> {
  if (!("listen" in db) || db.kind === "pglite") {
    // One process owns an embedded store (its admin socket runs changes through a bare
    // Queryable): its caches are all here.
    const result = await write();
    announceInThisProcess(change);
    return result;
  }
  let confirmations = 0;
  let expected = Number.POSITIVE_INFINITY;
  let allConfirmed: () => void = () => {};
  const confirmed = new Promise<void>((resolve) => {
    allConfirmed = resolve;
  });
  let listening: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    listening = resolve;
  });
  const stop = db.listen(KEY_CHANGES_DONE_CHANNEL, {
    message: (done) => {
      if (done === change && ++confirmations >= expected) allConfirmed();
    },
    connected: () => listening(),
    disconnected: () => {},
  });
  try {
    await Promise.race([ready, timeout()]);
    // Counted before the write: an instance that starts listening later starts with no cache.
    expected = await listenerCount(db, KEY_CHANGES_CHANNEL);
    const result = await write();
    announceInThisProcess(change);
    if (confirmations >= expected) allConfirmed();
    await Promise.race([confirmed, timeout()]);
    return result;
  } finally {
    await stop();
  }
}

const timeout = () =>
  new Promise<void>((resolve) => setTimeout(resolve, CONFIRM_TIMEOUT_MS).unref());

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
      message: (change) => {
        this.forget(change);
        // A writer in another process waits for every listener to confirm (announceKeyChange).
        confirmKeyChange(db, change).catch(() => {});
      },
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
