import type { Queryable } from "../db/database.ts";
import { type ItemColumn, statementItems } from "../db/statement-items.ts";
import { PURGED_PER_STATEMENT } from "../idempotency/idempotency.repository.ts";
import type { KeyedRequest, StoredResponse } from "../idempotency/idempotency.service.ts";
import {
  NEW_FORM_COLUMNS,
  NEW_FORM_ITEM,
  NEW_FORM_VALUES,
  type NewFormRow,
} from "./forms.repository.ts";

export interface KeyClaim {
  request: KeyedRequest;
  /** The response the create answers with, stored under the key by the same statement. */
  response: StoredResponse;
  /** The form created when the claim succeeds: its organization is the request's. */
  form: NewFormRow;
}

/** Keys created this long before a statement have expired: one may be taken over, some go. */
export interface KeyExpiry {
  lifetimeMs: number;
}

/** A claim as an item: its key and response, then its form's columns (NEW_FORM_ITEM). */
const CLAIM_ITEM: readonly ItemColumn<KeyClaim>[] = [
  { name: "key_organization_in", type: "text", of: (claim) => claim.request.organizationId },
  { name: "key_in", type: "text", of: (claim) => claim.request.key },
  { name: "request_hash_in", type: "text", of: (claim) => claim.request.requestHash },
  { name: "status_in", type: "int", of: (claim) => claim.response.status },
  { name: "location_in", type: "text", of: (claim) => claim.response.location },
  { name: "body_in", type: "text", of: (claim) => claim.response.body },
  ...NEW_FORM_ITEM.map((column) => ({ ...column, of: (claim: KeyClaim) => column.of(claim.form) })),
];

/**
 * Idempotent creates in one statement: each key is claimed with its response already in it (when
 * it is free, or held only by an expired row, which is taken over), each form is inserted only
 * when its claim succeeded, and up to PURGED_PER_STATEMENT expired keys go, other than those
 * claimed here (the statement sees the rows it takes over as they were). One statement commits
 * whole or not at all, as the transaction of four round trips it replaced did. For each claim,
 * whether it succeeded: false when the key was taken. A concurrent claim of a key waits until the
 * statement that holds it ends, and then finds it taken too, so only one create runs under a key.
 */
export async function insertFormsOnce(
  db: Queryable,
  claims: KeyClaim[],
  expiry: KeyExpiry,
): Promise<boolean[]> {
  const item = statementItems(CLAIM_ITEM, claims, 2);
  const rows = await db.query<{ id: string }>(
    `WITH item AS (SELECT * FROM ${item.relation}),
     claimed AS (
       INSERT INTO idempotency_keys (organization_id, key, request_hash, created_at,
         response_status, response_location, response_body)
       SELECT key_organization_in, key_in, request_hash_in, created_at_in::timestamptz, status_in,
              location_in, body_in FROM item
       ON CONFLICT (organization_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
             response_status = EXCLUDED.response_status,
             response_location = EXCLUDED.response_location,
             response_body = EXCLUDED.response_body
         WHERE idempotency_keys.created_at < $1
       RETURNING organization_id, key),
     inserted AS (
       INSERT INTO forms (${NEW_FORM_COLUMNS})
       SELECT ${NEW_FORM_VALUES}
         FROM item JOIN claimed ON claimed.organization_id = item.key_organization_in
                               AND claimed.key = item.key_in COLLATE "C"
       RETURNING id),
     purged AS (
       DELETE FROM idempotency_keys
        WHERE (organization_id, key) IN (
          SELECT organization_id, key FROM idempotency_keys AS expired
           WHERE created_at < $1 AND NOT EXISTS (
             SELECT FROM item WHERE item.key_organization_in = expired.organization_id
                                AND item.key_in COLLATE "C" = expired.key)
           ORDER BY created_at LIMIT ${PURGED_PER_STATEMENT} FOR UPDATE SKIP LOCKED))
     SELECT id FROM inserted`,
    [new Date(Date.now() - expiry.lifetimeMs), ...item.params],
  );
  const created = new Set(rows.map((row) => row.id));
  return claims.map((claim) => created.has(claim.form.id));
}
