import { cli } from "../../server/server-process.ts";

export interface Tenant {
  organizationId: string;
  keyId: string;
  key: string;
}

/**
 * `count` new organizations with one key of `scope` each, made with the `formdeck` CLI on the
 * store that `env` names (through the running server's admin socket on the embedded store).
 */
export async function createTenants(
  count: number,
  env: Record<string, string | undefined>,
  label = "reliability",
  scope: "full" | "read" = "full",
): Promise<Tenant[]> {
  const make = async (i: number): Promise<Tenant> => {
    const org = await cli<{ id: string }>(["org", "create", "--name", `${label} ${i}`], env);
    const key = await cli<{ id: string; key: string }>(
      ["key", "create", "--org", org.id, "--scope", scope, "--name", `${label} ${i}`],
      env,
    );
    return { organizationId: org.id, keyId: key.id, key: key.key };
  };
  const tenants: Tenant[] = [];
  // A few at a time: each is a Node process, and the machine is shared.
  for (let i = 0; i < count; i += 4) {
    const batch = Array.from({ length: Math.min(4, count - i) }, (_, j) => make(i + j));
    tenants.push(...(await Promise.all(batch)));
  }
  return tenants;
}
