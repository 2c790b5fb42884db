import type { Database, Queryable } from "../db/database.ts";
import { invalid } from "../http/errors.ts";
import {
  claimKey,
  findKey,
  type KeyedRequest,
  type StoredResponse,
  storeResponse,
} from "./idempotency.repository.ts";
import { IDEMPOTENCY_HEADER } from "./idempotency-key.ts";

export type { KeyedRequest, StoredResponse } from "./idempotency.repository.ts";

/** How long a key is kept: a request repeated within this time is answered from the store. */
export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface Outcome {
  response: StoredResponse;
  /** True when `response` was stored by an earlier request and nothing was done now. */
  replayed: boolean;
}

/**
 * The response stored under the request's key, when it has one; a different body under the same
 * key is a 422. For a request that must not repeat a step (a captcha token is good once) when its
 * key was already answered; `respondOnce` still settles races between concurrent requests.
 */
export async function findStoredResponse(
  db: Queryable,
  request: KeyedRequest,
): Promise<StoredResponse | null> {
  const stored = await findKey(db, request.organizationId, request.key);
  if (!stored?.response || stored.createdAt.getTime() < Date.now() - KEY_LIFETIME_MS) return null;
  if (stored.requestHash !== request.requestHash) {
    throw invalid(IDEMPOTENCY_HEADER, "was already used with a different request body");
  }
  return stored.response;
}

/**
 * Runs `work` at most once per organization and key. `work` runs in the transaction that claims
 * the key and stores its response: the effect and the stored response commit together, or
 * neither does (a request that fails stores nothing, and its key stays free for a retry).
 * A request that finds the key taken waits until the first one ends, then plays its response
 * back; a different body under the same key is a 422 and changes nothing.
 */
export function respondOnce(
  db: Database,
  request: KeyedRequest,
  work: (tx: Queryable) => Promise<StoredResponse>,
): Promise<Outcome> {
  return db.transaction(async (tx) => {
    const now = new Date();
    const expiredBefore = new Date(now.getTime() - KEY_LIFETIME_MS);
    if (await claimKey(tx, request, now, expiredBefore)) {
      const response = await work(tx);
      await storeResponse(tx, request, response, expiredBefore);
      return { response, replayed: false };
    }
    // The claim locked the committed row, so it is still here and complete.
    const outcome = await playBack(tx, request);
    if (!outcome) throw new Error("idempotency key row vanished while locked");
    return outcome;
  });
}

/**
 * The response stored under a key that a claim found taken, played back; a different body under
 * the key is a 422. Null when no response is stored under it (any more).
 */
export async function playBack(db: Queryable, request: KeyedRequest): Promise<Outcome | null> {
  const stored = await findKey(db, request.organizationId, request.key);
  if (!stored?.response) return null;
  if (stored.requestHash !== request.requestHash) {
    throw invalid(IDEMPOTENCY_HEADER, "was already used with a different request body");
  }
  return { response: stored.response, replayed: true };
}
