import {
  type ApiKeyRow,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from "../auth/api-keys.repository.ts";
import {
  displayPrefix,
  generateApiKey,
  hashApiKey,
  type Plan,
  type Scope,
} from "../auth/api-keys.ts";
import { announceKeyChange, keyChange } from "../auth/key-cache.ts";
import type { Database, Queryable } from "../db/database.ts";
import { newId } from "../ids.ts";
import {
  findOrganization,
  insertOrganization,
  listOrganizations,
  type Organization,
  setOrganizationPlan,
} from "../organizations/organizations.repository.ts";

/** A failure the operator caused (an unknown id); the CLI prints its message on one line. */
export class AdminError extends Error {}

export interface OrganizationView {
  id: string;
  name: string;
  plan: Plan;
  createdAt: string;
}

export interface ApiKeyView {
  id: string;
  organizationId: string;
  name: string;
  scope: Scope;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

const orgView = (org: Organization): OrganizationView => ({
  id: org.id,
  name: org.name,
  plan: org.plan,
  createdAt: org.createdAt.toISOString(),
});

const keyView = (key: ApiKeyRow): ApiKeyView => ({
  id: key.id,
  organizationId: key.organizationId,
  name: key.name,
  scope: key.scope,
  prefix: key.displayPrefix,
  createdAt: key.createdAt.toISOString(),
  revokedAt: key.revokedAt?.toISOString() ?? null,
});

const noSuchOrganization = (organizationId: string) =>
  new AdminError(`organization ${organizationId} does not exist`);

async function requireOrganization(db: Queryable, organizationId: string): Promise<void> {
  if (!(await findOrganization(db, organizationId))) throw noSuchOrganization(organizationId);
}

export async function createOrganization(
  db: Queryable,
  input: { name: string; plan: Plan },
): Promise<OrganizationView> {
  const org = await insertOrganization(db, {
    id: newId("org"),
    name: input.name,
    plan: input.plan,
    createdAt: new Date(),
  });
  return orgView(org);
}

export async function listAllOrganizations(db: Queryable): Promise<OrganizationView[]> {
  return (await listOrganizations(db)).map(orgView);
}

export async function changePlan(
  db: Queryable | Database,
  organizationId: string,
  plan: Plan,
): Promise<OrganizationView> {
  const org = await announceKeyChange(db, keyChange.organization(organizationId), () =>
    setOrganizationPlan(db, organizationId, plan),
  );
  if (!org) throw noSuchOrganization(organizationId);
  return orgView(org);
}

/** Creates a key and returns it with its plaintext `key`: the only time the plaintext exists. */
export async function createApiKey(
  db: Queryable,
  input: { organizationId: string; scope: Scope; name: string },
): Promise<ApiKeyView & { key: string }> {
  await requireOrganization(db, input.organizationId);
  const key = generateApiKey();
  const row = await insertApiKey(db, {
    id: newId("key"),
    organizationId: input.organizationId,
    name: input.name,
    scope: input.scope,
    keyHash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    createdAt: new Date(),
  });
  return { ...keyView(row), key };
}

export async function listOrganizationKeys(
  db: Queryable,
  organizationId: string,
): Promise<ApiKeyView[]> {
  await requireOrganization(db, organizationId);
  return (await listApiKeys(db, organizationId)).map(keyView);
}

export async function revokeKey(db: Queryable | Database, keyId: string): Promise<ApiKeyView> {
  const row = await announceKeyChange(db, keyChange.key(keyId), () => revokeApiKey(db, keyId));
  if (!row) throw new AdminError(`key ${keyId} does not exist`);
  return keyView(row);
}
