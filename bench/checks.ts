import { isDeepStrictEqual } from "node:util";
import { createApiKey, revokeKey } from "../src/admin/admin.service.ts";
import { openDatabase, type Queryable } from "../src/db/database.ts";
import type { BenchOrganization } from "./bench-organizations.ts";
import { apiKeyHeader, formsLabel, type LoadTarget } from "./measurement.ts";
import { deepPage, listPath } from "./scenarios.ts";
import { RARE_WORD, RARE_WORD_FORMS } from "./seed-forms.ts";

/** A check made before any load: figures of a server that answers wrongly mean nothing. */
export interface CheckResult {
  name: string;
  passed: boolean;
  detail: string;
}

async function list(target: LoadTarget, query: string) {
  const response = await fetch(`${target.server.origin}${listPath(query)}`, {
    headers: target.headers,
  });
  const body = (await response.json()) as { meta?: { total?: unknown } };
  return { status: response.status, body, total: body.meta?.total };
}

/**
 * Every list scenario's query, and the other type's: formdeck's meta.total equals what was
 * seeded, and each baseline answers exactly formdeck's body, so that both do the same work.
 */
export async function checkLists(
  db: Queryable,
  org: BenchOrganization,
  formdeck: LoadTarget,
  baselines: readonly LoadTarget[],
): Promise<CheckResult[]> {
  const byType = await db.query<{ type: string; forms: number }>(
    "SELECT type, count(*)::int AS forms FROM forms WHERE organization_id = $1 GROUP BY type",
    [org.id],
  );
  const ofType = (type: string) => byType.find((row) => row.type === type)?.forms ?? 0;
  const expected: [query: string, total: number][] = [
    ["", org.size],
    ["?type=hosted", ofType("hosted")],
    ["?type=endpoint", ofType("endpoint")],
    ["?sort=submissions", org.size],
    [`?search=${RARE_WORD}`, RARE_WORD_FORMS],
    [`?page=${deepPage(org.size)}`, org.size],
  ];
  const forms = `${formsLabel(org.size)} forms`;
  const results: CheckResult[] = [];
  for (const [query, total] of expected) {
    const reference = await list(formdeck, query);
    results.push({
      name: `formdeck, ${forms}: meta.total of list${query}`,
      passed: reference.status === 200 && reference.total === total,
      detail: `expected ${total}, got ${reference.status} with total ${reference.total}`,
    });
    for (const baseline of baselines) {
      const answer = await list(baseline, query);
      results.push({
        name: `${baseline.server.name}, ${forms}: answers list${query} as formdeck does`,
        passed: answer.status === 200 && isDeepStrictEqual(answer.body, reference.body),
        detail: `${baseline.server.name} answered ${answer.status} with ${JSON.stringify(answer.body).slice(0, 200)}`,
      });
    }
  }
  return results;
}

/** Revocations tried: a race between the revocation and the next request may lose only rarely. */
export const REVOCATIONS = 20;

/**
 * A key revoked on the database (as `formdeck key revoke` does, from a process of its own and
 * with a connection of the same kind) is refused on its very next request, even right after a
 * request that succeeded with it.
 */
export async function checkRevokedKeyRefused(
  databaseUrl: string,
  org: BenchOrganization,
  formdeck: LoadTarget,
): Promise<CheckResult> {
  const db = await openDatabase({ databaseUrl, dataDir: null });
  let accepted = 0;
  let newKeyStatus = 200;
  for (let attempt = 0; attempt < REVOCATIONS; attempt++) {
    const created = await createApiKey(db, {
      organizationId: org.id,
      scope: "read",
      name: "bench revoked",
    });
    const target = { ...formdeck, headers: apiKeyHeader(created.key) };
    const before = await list(target, "");
    await revokeKey(db, created.id);
    const after = await list(target, "");
    if (before.status !== 200) newKeyStatus = before.status;
    else if (after.status !== 401) accepted += 1;
  }
  await db.close();
  return {
    name: `formdeck: a revoked key is refused on its next request (${REVOCATIONS} keys)`,
    passed: accepted === 0 && newKeyStatus === 200,
    detail:
      newKeyStatus === 200
        ? `${accepted} of ${REVOCATIONS} revoked keys were accepted once more`
        : `a new key got ${newKeyStatus} on its first request`,
  };
}
