import type { Plan } from "../auth/api-keys.ts";
import { KEY_CHANGES_CHANNEL, keyChange } from "../auth/key-cache.ts";
import type { Queryable } from "../db/database.ts";

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  createdAt: Date;
}

const ORG_COLUMNS = `id, name, plan, created_at AS "createdAt"`;

export async function insertOrganization(db: Queryable, org: Organization): Promise<Organization> {
  const rows = await db.query<Organization>(
    `INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $2, $3, $4)
     RETURNING ${ORG_COLUMNS}`,
    [org.id, org.name, org.plan, org.createdAt],
  );
  return rows[0] as Organization;
}

export function listOrganizations(db: Queryable): Promise<Organization[]> {
  return db.query<Organization>(`SELECT ${ORG_COLUMNS} FROM organizations ORDER BY created_at, id`);
}

export async function findOrganization(db: Queryable, id: string): Promise<Organization | null> {
  const rows = await db.query<Organization>(
    `SELECT ${ORG_COLUMNS} FROM organizations WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

export async function setOrganizationPlan(
  db: Queryable,
  id: string,
  plan: Plan,
): Promise<Organization | null> {
  const rows = await db.query<Organization>(
    // Announced in the same statement, so that no instance keeps serving the old plan.
    `UPDATE organizations SET plan = $2 WHERE id = $1
      RETURNING ${ORG_COLUMNS}, pg_notify($3, $4) IS NULL AS announced`,
    [id, plan, KEY_CHANGES_CHANNEL, keyChange.organization(id)],
  );
  return rows[0] ?? null;
}
