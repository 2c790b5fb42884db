import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database } from "../db/database.ts";
import { batchesPerStore, StatementBatches } from "../db/statement-batches.ts";
import {
  KEY_LIFETIME_MS,
  type KeyedRequest,
  type Outcome,
  playBack,
  type StoredResponse,
} from "../idempotency/idempotency.service.ts";
import { insertFormsOnce, type KeyClaim } from "./create-once.repository.ts";
import type { CreateFormInput, FormRecord } from "./forms.schemas.ts";
import { newFormRow, toFormRecord } from "./forms.service.ts";

/** Claims that may find the key taken, then its row gone (expired meanwhile), before giving up. */
const ATTEMPTS = 2;

/** The claims that arrive together go as one statement (statement-batches.ts), one per key. */
const keyedCreates = batchesPerStore(
  (db) =>
    new StatementBatches(
      (claims: KeyClaim[]) => insertFormsOnce(db, claims, { lifetimeMs: KEY_LIFETIME_MS }),
      {
        maxItems: 100,
        keyOf: (claim) => `${claim.request.organizationId} ${claim.request.key}`,
      },
    ),
);

/**
 * Creates the form at most once per organization and key (`Idempotency-Key`), in one statement
 * (src/forms/create-once.repository.ts) instead of a transaction of four round trips, which made
 * a keyed create less than half as fast as one without a key. So the response, stored by that
 * statement, is built before it from the row it inserts (`respond` serializes the record as the
 * route sends it). A request under a key already answered gets that answer back, `replayed`.
 */
export async function createFormOnce(
  db: Database,
  owner: KeyOwner,
  input: CreateFormInput,
  request: KeyedRequest,
  respond: (form: FormRecord) => StoredResponse,
): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    const form = newFormRow(owner, input, new Date());
    // As a read right after would give it (READS_CLOSED, src/forms/forms.repository.ts): a new
    // form has no submissions, and its row holds no deadline already passed (nextClosingState
    // turns one into the switch), so the switch alone says whether it is closed.
    const response = respond(toFormRecord({ ...form, isClosed: form.storedIsClosed }));
    if (await keyedCreates(db).submit({ request, response, form })) {
      return { response, replayed: false };
    }
    const stored = await playBack(db, request);
    if (stored) return stored;
    if (attempt === ATTEMPTS) throw new Error("idempotency key: taken, then gone, twice");
  }
}
