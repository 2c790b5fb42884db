import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import { runAdminCommand } from "../src/admin/admin-commands.ts";
import type { Queryable } from "../src/db/database.ts";
import { RARE_WORD, RARE_WORD_FORMS, seedForms } from "./seed-forms.ts";

export interface BenchOrganization {
  id: string;
  size: number;
  /** A full-scope key created for this run: keys are shown only once, so every run makes one. */
  key: string;
}

/** Forms of the organization that the create and update runs write to, reset on every run. */
export const WRITES_ORGANIZATION_SIZE = 10_000;

export const organizationName = (size: number) => `bench ${size}`;
const WRITES_ORGANIZATION_NAME = "bench writes";

/** The organization named `name`, if there is exactly one and it holds what seeding gives. */
async function findSeeded(db: Queryable, name: string, size: number): Promise<string | null> {
  const orgs = await db.query<{ id: string }>("SELECT id FROM organizations WHERE name = $1", [
    name,
  ]);
  const id = orgs.length === 1 ? orgs[0]?.id : undefined;
  if (!id) return null;
  const [counts] = await db.query<{ forms: number; rare: number }>(
    `SELECT count(*)::int AS forms, count(*) FILTER (WHERE name ILIKE $2)::int AS rare
       FROM forms WHERE organization_id = $1`,
    [id, `%${RARE_WORD}%`],
  );
  return counts?.forms === size && counts.rare === RARE_WORD_FORMS ? id : null;
}

/** Deletes every organization named `name` (their forms and keys go with them) and seeds anew. */
async function seedOrganization(db: Queryable, name: string, size: number): Promise<string> {
  await db.query("DELETE FROM organizations WHERE name = $1", [name]);
  const org = await createOrganization(db, { name, plan: "paid" });
  await seedForms(db, org.id, size);
  return org.id;
}

async function withNewKey(db: Queryable, id: string, size: number): Promise<BenchOrganization> {
  // Earlier runs' keys can never be used again (their plaintext is gone): they only pile up.
  await db.query("DELETE FROM api_keys WHERE organization_id = $1", [id]);
  const { key } = await createApiKey(db, { organizationId: id, scope: "full", name: "bench" });
  return { id, size, key };
}

/**
 * The organization of `size` forms: reused when an earlier run seeded it (seeding a million forms
 * takes a while), seeded otherwise or when `reseed` is set.
 */
export async function prepareOrganization(
  db: Queryable,
  size: number,
  reseed: boolean,
  log: (line: string) => void,
): Promise<BenchOrganization> {
  const name = organizationName(size);
  let id = reseed ? null : await findSeeded(db, name, size);
  if (id) {
    log(`reusing "${name}"`);
  } else {
    const started = performance.now();
    id = await seedOrganization(db, name, size);
    log(`seeded "${name}" in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  return withNewKey(db, id, size);
}

/** The organization that create and update write to: seeded anew every run, so runs compare. */
export async function prepareWritesOrganization(db: Queryable): Promise<BenchOrganization> {
  const id = await seedOrganization(db, WRITES_ORGANIZATION_NAME, WRITES_ORGANIZATION_SIZE);
  return withNewKey(db, id, WRITES_ORGANIZATION_SIZE);
}

/** `count` more full-scope keys of the organization, made as `formdeck key create` makes them. */
export async function createKeys(db: Queryable, organizationId: string, count: number) {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await runAdminCommand(db, {
      type: "key.create",
      organizationId,
      scope: "full",
      name: `bench ${i}`,
    });
    keys.push((created as { key: string }).key);
  }
  return keys;
}

/** Ids of up to `limit` forms of the organization, for runs that rotate over existing forms. */
export async function formIdsOf(db: Queryable, organizationId: string, limit: number) {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM forms WHERE organization_id = $1 ORDER BY id LIMIT $2",
    [organizationId, limit],
  );
  return rows.map((row) => row.id);
}
