import type { Queryable } from "../src/db/database.ts";
import type { BenchOrganization } from "./bench-organizations.ts";
import { type CheckResult, checkLists, checkRevokedKeyRefused } from "./checks.ts";
import { apiKeyHeader, type LoadTarget, type Measurer } from "./measurement.ts";
import { LIST_SCENARIOS, listPath, SCENARIOS } from "./scenarios.ts";
import { RARE_WORD } from "./seed-forms.ts";
import {
  peakRssMb,
  type RunningServer,
  startFormdeck,
  startFormdeckWithoutAuth,
  startMinimalHandler,
  startRuntimeLimit,
} from "./servers.ts";

export interface PostgresData {
  databaseUrl: string;
  db: Queryable;
  /** One per organization size, ascending. */
  organizations: BenchOrganization[];
  writes: BenchOrganization;
  /** Forms of the smallest organization, read by id. */
  readIds: string[];
  /** Forms of the writes organization, updated in turn. */
  updateIds: string[];
}

/**
 * Every server side by side on the same data: correctness checks first, then each scenario on
 * formdeck and right after on its baseline, so that both meet the same machine noise.
 */
export async function measureOnPostgres(
  data: PostgresData,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<{ checks: CheckResult[]; peakRssMb: number | null }> {
  const { databaseUrl, db, organizations, writes } = data;
  const smallest = organizations[0] as BenchOrganization;
  const largest = organizations.at(-1) as BenchOrganization;
  const servers: RunningServer[] = [];
  const started = async (starting: Promise<RunningServer>): Promise<LoadTarget> => {
    const server = await starting;
    servers.push(server);
    return { server, headers: {} };
  };
  try {
    const formdeck = await started(startFormdeck(databaseUrl));
    const formdeckFor = (org: BenchOrganization) => ({
      ...formdeck,
      headers: apiKeyHeader(org.key),
    });
    const minimal = new Map<BenchOrganization, LoadTarget>();
    for (const org of [...organizations, writes]) {
      minimal.set(org, await started(startMinimalHandler(databaseUrl, org.id)));
    }
    const minimalFor = (org: BenchOrganization) => minimal.get(org) as LoadTarget;
    const withoutAuth = await started(startFormdeckWithoutAuth(databaseUrl, smallest.id));

    const checks: CheckResult[] = [];
    for (const org of organizations) {
      const baselines = org === smallest ? [minimalFor(org), withoutAuth] : [minimalFor(org)];
      checks.push(...(await checkLists(db, org, formdeckFor(org), baselines)));
    }
    checks.push(await checkRevokedKeyRefused(databaseUrl, smallest, formdeckFor(smallest)));
    // A failed check fails the run, but the figures are still measured: they are what the
    // service does now, and the one making it faster needs them either way.
    for (const check of checks.filter((c) => !c.passed)) log(`FAIL ${check.name}: ${check.detail}`);
    log(`checks: ${checks.filter((c) => c.passed).length} of ${checks.length} passed`);

    const listResponse = await fetch(`${formdeck.server.origin}${listPath("")}`, {
      headers: apiKeyHeader(smallest.key),
    });
    const runtimeLimit = await started(startRuntimeLimit(await listResponse.text()));
    const listDefaults = { kind: "get", path: listPath("") } as const;
    await measurer.measure(SCENARIOS.listDefaults, smallest.size, runtimeLimit, listDefaults);

    for (const scenario of LIST_SCENARIOS) {
      for (const org of organizations) {
        const request = { kind: "get", path: listPath(scenario.query(org.size)) } as const;
        if (scenario.name === SCENARIOS.listDefaults && org === smallest) {
          // Two targets compare these three: the 100-form list and the key check's cost.
          await measurer.measureSideBySide(scenario.name, org.size, [
            { target: formdeckFor(org), request },
            { target: minimalFor(org), request },
            { target: withoutAuth, request },
          ]);
          continue;
        }
        await measurer.measure(scenario.name, org.size, formdeckFor(org), request);
        await measurer.measure(scenario.name, org.size, minimalFor(org), request);
      }
    }
    const search = { kind: "get", path: listPath(`?search=${RARE_WORD}`) } as const;
    await measurer.measure(
      SCENARIOS.listSearchOneClient,
      largest.size,
      formdeckFor(largest),
      search,
      1,
    );

    const read = { kind: "get-each", formIds: data.readIds } as const;
    await measurer.measure(SCENARIOS.getById, smallest.size, formdeckFor(smallest), read);
    await measurer.measure(SCENARIOS.getById, smallest.size, withoutAuth, read);

    const writeRequests = [
      [SCENARIOS.create, { kind: "create" }],
      [SCENARIOS.update, { kind: "update", formIds: data.updateIds }],
    ] as const;
    for (const [scenario, request] of writeRequests) {
      await measurer.measureSideBySide(scenario, writes.size, [
        { target: formdeckFor(writes), request },
        { target: minimalFor(writes), request },
      ]);
    }
    const loaded = measurer.measurements.some((m) => m.server === "formdeck");
    return { checks, peakRssMb: loaded ? await peakRssMb(formdeck.server) : null };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
