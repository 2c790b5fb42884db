import type { Queryable } from "../src/db/database.ts";
import type { BenchOrganization } from "./bench-organizations.ts";
import { type CheckResult, checkLists, checkRevokedKeyRefused } from "./checks.ts";
import type { LoadRequest } from "./load-spec.ts";
import {
  apiKeyHeader,
  findMeasurement,
  KEY_CHECK_ROUNDS,
  type LoadTarget,
  type Measurer,
} from "./measurement.ts";
import { LIST_SCENARIOS, listPath, SCENARIOS } from "./scenarios.ts";
import { RARE_WORD } from "./seed-forms.ts";
import {
  peakRssMb,
  type RunningServer,
  startFormdeck,
  startFormdeckWithoutAuth,
  startFormdeckWithRedis,
  startMinimalHandler,
  startRuntimeLimit,
} from "./servers.ts";

export interface PostgresData {
  databaseUrl: string;
  redisUrl: string;
  db: Queryable;
  /** One per organization size, ascending. */
  organizations: BenchOrganization[];
  writes: BenchOrganization;
  /** Keys of the smallest organization, sent in turn by the many-keys run. */
  manyKeys: string[];
  /** Forms of the smallest organization, read by id. */
  readIds: string[];
  /** Forms of the writes organization, updated in turn. */
  updateIds: string[];
}

/**
 * Every server side by side on the same data: correctness checks first, then each scenario on
 * formdeck and right after on its baseline, so that both meet the same machine noise. The runs
 * that targets compare take turns, three rounds (Measurer.compare).
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
    const withRedis = await started(startFormdeckWithRedis(databaseUrl, data.redisUrl));

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
    await measurer.measure({
      scenario: SCENARIOS.listDefaults,
      forms: smallest.size,
      target: runtimeLimit,
      request: { kind: "get", path: listPath("") },
    });

    const list = (scenario: (typeof LIST_SCENARIOS)[number], org: BenchOrganization) => ({
      scenario: scenario.name,
      forms: org.size,
      request: { kind: "get", path: listPath(scenario.query(org.size)) } as const,
    });
    const [defaults, byType] = LIST_SCENARIOS as [ListScenario, ListScenario];
    // The list at the smallest size beside every baseline and every path of the key check, and
    // at a million for its p50 growth: one comparison, so that all meet the same noise.
    const smallList = list(defaults, smallest);
    const million = organizations.find((org) => org.size === 1_000_000);
    await measurer.compare(
      [
        { ...smallList, target: formdeckFor(smallest) },
        { ...smallList, target: minimalFor(smallest) },
        { ...smallList, target: withoutAuth },
        { ...smallList, target: { ...withRedis, headers: apiKeyHeader(smallest.key) } },
        {
          ...smallList,
          scenario: SCENARIOS.listManyKeys,
          target: { ...formdeckFor(smallest), apiKeys: data.manyKeys },
        },
        ...(million ? [{ ...list(defaults, million), target: formdeckFor(million) }] : []),
      ],
      KEY_CHECK_ROUNDS,
    );
    const tenThousand = organizations.find((org) => org.size === 10_000);
    if (tenThousand) {
      await measurer.compare([
        { ...list(defaults, tenThousand), target: formdeckFor(tenThousand) },
        { ...list(defaults, tenThousand), target: minimalFor(tenThousand) },
      ]);
    }
    if (million) {
      await measurer.compare([
        { ...list(byType, million), target: formdeckFor(million) },
        { ...list(byType, smallest), target: formdeckFor(smallest) },
      ]);
    }
    // Every other list run once, formdeck and right after the minimal handler.
    for (const scenario of LIST_SCENARIOS) {
      for (const org of organizations) {
        for (const target of [formdeckFor(org), minimalFor(org)]) {
          const run = { ...list(scenario, org), target };
          if (!findMeasurement(measurer.measurements, run.scenario, org.size, target.server.name)) {
            await measurer.measure(run);
          }
        }
      }
    }
    await measurer.measure({
      scenario: SCENARIOS.listSearchOneClient,
      forms: largest.size,
      target: formdeckFor(largest),
      request: { kind: "get", path: listPath(`?search=${RARE_WORD}`) },
      connections: 1,
    });

    const read = { kind: "get-each", formIds: data.readIds } as const;
    for (const target of [formdeckFor(smallest), withoutAuth]) {
      await measurer.measure({
        scenario: SCENARIOS.getById,
        forms: smallest.size,
        target,
        request: read,
      });
    }
    // The writes compare one instance with the minimal handler. A second instance listening on
    // the same database would make every change to a hosted form wait for its confirmation
    // (docs/decisions.md, "Hosted pages"): a cost of several instances, not of the write.
    await Promise.all([withoutAuth.server.stop(), withRedis.server.stop()]);

    const onWrites = (scenario: string, target: LoadTarget, request: LoadRequest) => ({
      scenario,
      forms: writes.size,
      target,
      request,
    });
    const formdeckWrites = formdeckFor(writes);
    const minimalWrites = minimalFor(writes);
    await measurer.compare([
      onWrites(SCENARIOS.create, formdeckWrites, { kind: "create" }),
      onWrites(SCENARIOS.create, minimalWrites, { kind: "create" }),
      onWrites(SCENARIOS.createIdempotent, formdeckWrites, { kind: "create", idempotent: true }),
    ]);
    const updates = [
      [SCENARIOS.update, "rename", data.updateIds],
      [SCENARIOS.updateClose, "close", data.updateIds],
      [SCENARIOS.updateAutoClose, "auto-close", data.updateIds],
      [SCENARIOS.updateOneForm, "rename or close", data.updateIds.slice(0, 1)],
    ] as const;
    for (const [scenario, body, formIds] of updates) {
      const request: LoadRequest = { kind: "update", formIds: [...formIds], body };
      await measurer.compare([
        onWrites(scenario, formdeckWrites, request),
        onWrites(scenario, minimalWrites, request),
      ]);
    }
    const loaded = measurer.measurements.some((m) => m.server === "formdeck");
    return { checks, peakRssMb: loaded ? await peakRssMb(formdeck.server) : null };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

type ListScenario = (typeof LIST_SCENARIOS)[number];
