import type { Queryable } from "../db/database.ts";
import type { KeyedRequest, StoredResponse } from "../idempotency/idempotency.service.ts";
import { NEW_FORM_COLUMNS, type NewFormRow, newFormValues } from "./forms.repository.ts";

export interface KeyClaim {
  request: KeyedRequest;
  /** The response the create answers with, stored under the key by the same statement. */
  response: StoredResponse;
  now: Date;
  /** Keys created before this have expired: one may be taken over, and up to `purgeLimit` go. */
  expiredBefore: Date;
  purgeLimit: number;
}

/**
 * An idempotent create in one statement: the key is claimed with its response already in it
 * (when it is free, or held only by an expired row, which is taken over), the form is inserted
 * only when the claim succeeded, and up to `purgeLimit` expired keys go, other than this one
 * (the statement sees the row it takes over as it was). One statement commits whole or not at
 * all, as the transaction of four did. False when the key was taken: a concurrent claim of it
 * waits until the statement that holds it ends, and then finds it taken too, so only one create
 * runs under a key.
 */
export async function insertFormOnce(
  db: Queryable,
  claim: KeyClaim,
  form: NewFormRow,
): Promise<boolean> {
  const { request, response } = claim;
  const rows = await db.query<{ created: number }>(
    `WITH claimed AS (
       INSERT INTO idempotency_keys (organization_id, key, request_hash, created_at,
         response_status, response_location, response_body)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (organization_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
             response_status = EXCLUDED.response_status,
             response_location = EXCLUDED.response_location,
             response_body = EXCLUDED.response_body
         WHERE idempotency_keys.created_at < $8
       RETURNING 1),
     inserted AS (
       INSERT INTO forms (${NEW_FORM_COLUMNS})
       SELECT $10, $11, $12, $13, $14, $15, $16, $17, $18, $19 WHERE EXISTS (SELECT FROM claimed)
       RETURNING 1),
     purged AS (
       DELETE FROM idempotency_keys
        WHERE (organization_id, key) IN (
          SELECT organization_id, key FROM idempotency_keys
           WHERE created_at < $8 AND NOT (organization_id = $1 AND key = $2)
           ORDER BY created_at LIMIT $9 FOR UPDATE SKIP LOCKED))
     SELECT count(*)::int AS created FROM inserted`,
    [
      request.organizationId,
      request.key,
      request.requestHash,
      claim.now,
      response.status,
      response.location,
      response.body,
      claim.expiredBefore,
      claim.purgeLimit,
      ...newFormValues(form),
    ],
  );
  return rows[0]?.created === 1;
}
