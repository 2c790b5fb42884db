import type { Queryable } from "../db/database.ts";
import type { Plan, Scope } from "./api-keys.ts";
import { KEY_CHANGES_CHANNEL, keyChange } from "./key-cache.ts";

export interface KeyOwner {
  keyId: string;
  organizationId: string;
  scope: Scope;
  plan: Plan;
}

export interface ApiKeyRow {
  id: string;
  organizationId: string;
  name: string;
  scope: Scope;
  displayPrefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

const KEY_COLUMNS = `id, organization_id AS "organizationId", name, scope,
  display_prefix AS "displayPrefix", created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** The key's organization and scope, or null for an unknown or revoked key. */
export async function findActiveKey(db: Queryable, keyHash: string): Promise<KeyOwner | null> {
  const rows = await db.query<KeyOwner>(
    `SELECT k.id AS "keyId", k.organization_id AS "organizationId", k.scope, o.plan
       FROM api_keys k JOIN organizations o ON o.id = k.organization_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash],
  );
  return rows[0] ?? null;
}

export async function insertApiKey(
  db: Queryable,
  key: Omit<ApiKeyRow, "revokedAt"> & { keyHash: string },
): Promise<ApiKeyRow> {
  const rows = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, organization_id, name, scope, key_hash, display_prefix, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KEY_COLUMNS}`,
    [
      key.id,
      key.organizationId,
      key.name,
      key.scope,
      key.keyHash,
      key.displayPrefix,
      key.createdAt,
    ],
  );
  return rows[0] as ApiKeyRow;
}

export function listApiKeys(db: Queryable, organizationId: string): Promise<ApiKeyRow[]> {
  return db.query<ApiKeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id`,
    [organizationId],
  );
}

/** Revokes the key; revoking it again keeps the first revocation time. Null for an unknown key. */
export async function revokeApiKey(db: Queryable, keyId: string): Promise<ApiKeyRow | null> {
  const rows = await db.query<ApiKeyRow>(
    // Announced in the same statement, so that no instance keeps accepting the key.
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE id = $1 RETURNING ${KEY_COLUMNS}, pg_notify($2, $3) IS NULL AS announced`,
    [keyId, KEY_CHANGES_CHANNEL, keyChange.key(keyId)],
  );
  return rows[0] ?? null;
}
