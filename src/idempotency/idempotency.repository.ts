import type { Queryable } from "../db/database.ts";

/** The response a request under a key was answered with, stored to be played back exactly. */
export interface StoredResponse {
  status: number;
  location: string;
  /** The body as it was sent: JSON text. */
  body: string;
}

export interface KeyedRequest {
  organizationId: string;
  key: string;
  requestHash: string;
}

export interface KeyRow {
  requestHash: string;
  /** Null only inside the transaction that claimed the key: committed rows always have one. */
  response: StoredResponse | null;
  createdAt: Date;
}

/**
 * Claims the key for this transaction: true when it was free (or held only by an expired row,
 * which is taken over). A concurrent claim of the same key waits on the primary key until this
 * transaction ends, so only one request runs under a key at a time.
 */
export async function claimKey(
  db: Queryable,
  request: KeyedRequest,
  now: Date,
  expiredBefore: Date,
): Promise<boolean> {
  const rows = await db.query<{ claimed: boolean }>(
    `INSERT INTO idempotency_keys (organization_id, key, request_hash, created_at)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization_id, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, response_status = NULL,
           response_location = NULL, response_body = NULL, created_at = EXCLUDED.created_at
       WHERE idempotency_keys.created_at < $5
     RETURNING true AS claimed`,
    [request.organizationId, request.key, request.requestHash, now, expiredBefore],
  );
  return rows.length > 0;
}

/**
 * Expired keys removed by each statement that stores a key, so that the table stays bounded. A
 * constant of the statements' text, not a parameter: PostgreSQL's plan for a prepared statement
 * whose LIMIT is a parameter assumes it reads a tenth of the rows, so it never chose that plan and
 * planned the statement anew on every run (pg_prepared_statements: 0 generic plans of 40).
 */
export const PURGED_PER_STATEMENT = 100;

/**
 * Stores the response of the request that claimed the key and, in the same statement (one round
 * trip fewer per keyed create), removes up to PURGED_PER_STATEMENT keys that expired before
 * `expiredBefore`, so that the table stays bounded. The claimed key is never among them: it was
 * written now.
 */
export async function storeResponse(
  db: Queryable,
  request: KeyedRequest,
  response: StoredResponse,
  expiredBefore: Date,
): Promise<void> {
  await db.query(
    `WITH purged AS (
       DELETE FROM idempotency_keys
        WHERE (organization_id, key) IN (
          SELECT organization_id, key FROM idempotency_keys
           WHERE created_at < $6 ORDER BY created_at LIMIT ${PURGED_PER_STATEMENT}
           FOR UPDATE SKIP LOCKED))
     UPDATE idempotency_keys
        SET response_status = $3, response_location = $4, response_body = $5
      WHERE organization_id = $1 AND key = $2`,
    [
      request.organizationId,
      request.key,
      response.status,
      response.location,
      response.body,
      expiredBefore,
    ],
  );
}

export async function findKey(
  db: Queryable,
  organizationId: string,
  key: string,
): Promise<KeyRow | null> {
  const rows = await db.query<{
    requestHash: string;
    status: number | null;
    location: string | null;
    body: string | null;
    createdAt: Date;
  }>(
    `SELECT request_hash AS "requestHash", response_status AS status,
            response_location AS location, response_body AS body, created_at AS "createdAt"
       FROM idempotency_keys WHERE organization_id = $1 AND key = $2`,
    [organizationId, key],
  );
  const row = rows[0];
  if (!row) return null;
  const { requestHash, status, location, body, createdAt } = row;
  return {
    requestHash,
    response:
      status === null || location === null || body === null ? null : { status, location, body },
    createdAt,
  };
}
