import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, runClients } from "./support/clients.ts";
import { FORMS } from "./support/forms-api.ts";
import { keepAliveAgent, type Reply, RequestFailure, send } from "./support/http-client.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, startServerWithin, trimRequestLogs } from "./support/servers.ts";
import { type StoreEnv, sharedPostgres } from "./support/store.ts";
import { percentile, rssMiB, Tally } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";
import {
  startThrowawayRedis,
  type ThrowawayRedis,
  throwawayRedisUnavailable,
} from "./support/throwaway-redis.ts";

const LOAD_CLIENTS = 10;
/** Each load client waits this long between requests: a moderate load, not a saturating one. */
const PACE_MS = 10;
const TIMEOUT_MS = 10_000;
/** The probe instances' small quota, on a key of its own. */
const PROBE_MAX = 5;
const PROBE_PER_INSTANCE = PROBE_MAX + 1;
const WINDOW_MS = 2000;
const BASELINE_MS = byProfile(3000, 10_000);
const OUTAGE_MS = byProfile(3000, 10_000);
/** At least; the phase also lasts until a whole window has started one window after the return. */
const AFTER_RETURN_MS = byProfile(0, 10_000);
const RATE_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

const WARM_UP = "warm-up";
const BASELINE = "baseline";
const KILLED = "redis killed";
const RESTARTED = "redis restarted";
const HUNG = "redis hung (SIGSTOP)";
const RESUMED = "redis resumed (SIGCONT)";
const OUTAGES = [KILLED, HUNG];
/** Redis up: the reference the outages' latency is held against. */
const HEALTHY = [BASELINE, RESTARTED, RESUMED];

interface ProbeWindow {
  start: number;
  phase: string;
  successes: number;
  statuses: number[];
}

/**
 * Sleeps at least `minMs`, then until shortly before a window boundary: Redis returns just
 * before a window starts, so that the window after it is the first one to be checked.
 */
async function sleepBeforeBoundary(minMs: number, leadMs = 300) {
  const earliest = Date.now() + minMs;
  const boundary = Math.ceil((earliest + leadMs) / WINDOW_MS) * WINDOW_MS;
  await sleep(boundary - leadMs - Date.now());
}

/** Sleeps at least `minMs`, and until the end of the first window that starts at `from` or later. */
async function sleepPastWholeWindow(from: number, minMs: number) {
  const firstChecked = Math.ceil(from / WINDOW_MS) * WINDOW_MS;
  await sleep(Math.max(Date.now() + minMs, firstChecked + WINDOW_MS + 100) - Date.now());
}

const missingHeaders = (reply: Reply) => RATE_HEADERS.filter((h) => reply.headers[h] === undefined);

test("Redis outage: killed, restarted, hung and resumed under load; no 5xx, bounded latency, shared limits come back", {
  skip: throwawayRedisUnavailable() ?? false,
}, async (t) => {
  let redis: ThrowawayRedis | undefined;
  let store: StoreEnv | null = null;
  const servers: RunningServer[] = [];
  const agent = keepAliveAgent(64);
  try {
    store = await sharedPostgres();
    if (!store) {
      t.skip("needs PostgreSQL (DATABASE_URL or initdb/pg_ctl) for three instances on one store");
      return;
    }
    redis = await startThrowawayRedis();
    figure(
      t,
      "profile",
      `${PROFILE} (baseline ${BASELINE_MS / 1000} s, outages ${OUTAGE_MS / 1000} s)`,
    );
    figure(t, "setup", `store: ${store.name}; throwaway redis-server on port ${redis.port}`);
    const common = { ...store.env, REDIS_URL: redis.url };
    // One instance carries the load with a quota it never reaches; two share a small quota.
    const loaded = await startServerWithin({ ...common, RATE_LIMIT_MAX: "1000000000" });
    servers.push(loaded);
    const probeEnv = {
      ...common,
      RATE_LIMIT_MAX: String(PROBE_MAX),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_MS / 1000),
    };
    servers.push(await startServerWithin(probeEnv), await startServerWithin(probeEnv));
    const probes = servers.slice(1).map((s) => s.url);
    const stopTrimming = servers.map((s) => trimRequestLogs(s));
    const [loadTenant, probeTenant] = await createTenants(2, store.env, "redis outage");
    assert.ok(loadTenant && probeTenant);

    let phase = WARM_UP;
    const marks: { phase: string; at: number }[] = [{ phase, at: Date.now() }];
    const enter = (next: string) => {
      phase = next;
      marks.push({ phase, at: Date.now() });
    };
    const tallies = new Map<string, Tally>();
    const tallyOf = (p: string) => {
      let tally = tallies.get(p);
      if (!tally) {
        tally = new Tally();
        tallies.set(p, tally);
      }
      return tally;
    };
    const problems = new Problems();
    /** Every load request: when it started, and how long it took. */
    const timeline: { phase: string; startedAt: number; ms: number }[] = [];
    let running = true;

    // The load: list and create on one instance, every answer a success with the three headers.
    const load = runClients(
      LOAD_CLIENTS,
      () => !running,
      async (client, i) => {
        const startPhase = phase;
        const create = i % 3 === 2;
        try {
          const reply = await send(loaded.url, agent, {
            method: create ? "POST" : "GET",
            path: create ? FORMS : `${FORMS}?pageSize=20`,
            key: loadTenant.key,
            ...(create ? { body: { name: `outage c${client} i${i}` } } : {}),
            timeoutMs: TIMEOUT_MS,
          });
          tallyOf(startPhase).add(create ? "create" : "list", reply);
          timeline.push({ phase: startPhase, startedAt: reply.startedAt, ms: reply.latencyMs });
          if (reply.status !== (create ? 201 : 200)) {
            problems.add(`${startPhase}: ${reply.status} ${reply.text.slice(0, 200)}`);
          }
          const missing = missingHeaders(reply);
          if (missing.length > 0)
            problems.add(`${startPhase}: a ${reply.status} without ${missing}`);
        } catch (error) {
          if (!(error instanceof RequestFailure)) throw error;
          tallyOf(startPhase).add(create ? "create" : "list", error);
          problems.add(`${startPhase}: ${error.message}`);
        }
        await sleep(PACE_MS);
      },
    );

    // Keyless requests to the probe instances, ten a second: each limiter asks Redis again as
    // soon as its cool-down allows, as it would under real traffic.
    const tick = runClients(
      1,
      () => !running,
      async () => {
        const startPhase = phase;
        for (const url of probes) {
          try {
            const reply = await send(url, agent, { path: FORMS, timeoutMs: TIMEOUT_MS });
            tallyOf(startPhase).add("keyless (probe instances)", reply);
            if (reply.status !== 401) problems.add(`keyless: ${reply.status} ${reply.text}`);
          } catch (error) {
            if (!(error instanceof RequestFailure)) throw error;
            tallyOf(startPhase).add("keyless (probe instances)", error);
            problems.add(`keyless: ${error.message}`);
          }
        }
        await sleep(100);
      },
    );

    // At the start of every window: the small-quota key, spread over both probe instances. A
    // shared count lets exactly PROBE_MAX through; per-instance counting lets each instance's through.
    const windows: ProbeWindow[] = [];
    const prober = (async () => {
      for (;;) {
        const start = (Math.floor(Date.now() / WINDOW_MS) + 1) * WINDOW_MS;
        await sleep(start + 20 - Date.now());
        if (!running) return;
        const startPhase = phase;
        const results = await Promise.allSettled(
          Array.from({ length: PROBE_PER_INSTANCE * 2 }, (_, i) =>
            send(probes[i % 2] as string, agent, {
              path: FORMS,
              key: probeTenant.key,
              timeoutMs: TIMEOUT_MS,
            }),
          ),
        );
        const statuses = results.map((r) => (r.status === "fulfilled" ? r.value.status : 0));
        for (const r of results) {
          if (r.status === "rejected") problems.add(`probe: ${String(r.reason)}`);
          else if (![200, 429].includes(r.value.status) || missingHeaders(r.value).length > 0) {
            problems.add(`probe: ${r.value.status} ${JSON.stringify(r.value.headers)}`);
          }
        }
        windows.push({
          start,
          phase: startPhase,
          successes: statuses.filter((s) => s === 200).length,
          statuses,
        });
      }
    })();

    // JIT, connection pools and keep-alive connections settle before anything is measured.
    await sleep(byProfile(1500, 3000));
    enter(BASELINE);
    const rssStart = rssMiB(loaded.child.pid);
    await sleepPastWholeWindow(Date.now(), BASELINE_MS);
    enter(KILLED);
    await redis.kill();
    await sleepBeforeBoundary(OUTAGE_MS);
    await redis.restart();
    enter(RESTARTED);
    await sleepPastWholeWindow(Date.now() + WINDOW_MS, AFTER_RETURN_MS);
    enter(HUNG);
    redis.pause();
    await sleepBeforeBoundary(OUTAGE_MS);
    redis.resume();
    enter(RESUMED);
    await sleepPastWholeWindow(Date.now() + WINDOW_MS, AFTER_RETURN_MS);
    running = false;
    enter("end");
    await Promise.all([load, tick, prober]);
    const rssEnd = rssMiB(loaded.child.pid);
    for (const stop of stopTrimming) stop();

    // Figures, phase by phase.
    const loadLatencies = (p: string) => [
      ...(tallies.get(p)?.latencies("list") ?? []),
      ...(tallies.get(p)?.latencies("create") ?? []),
    ];
    const p99 = (p: string) => percentile(loadLatencies(p), 99);
    for (const [i, mark] of marks.slice(0, -1).entries()) {
      const tally = tallyOf(mark.phase);
      const seconds = ((marks[i + 1]?.at ?? mark.at) - mark.at) / 1000;
      figure(
        t,
        `phase ${mark.phase}`,
        `${seconds.toFixed(1)} s, ${tally.total} requests: ${tally.outcomeLine()}`,
      );
      for (const line of tally.operationLines()) figure(t, `  ${mark.phase}`, line);
    }
    for (const w of windows) {
      figure(
        t,
        "probe window",
        `+${((w.start - (marks[0]?.at ?? 0)) / 1000).toFixed(1)} s (${w.phase}): ${w.successes} of ${w.statuses.length} through`,
      );
    }
    const healthyP99 = percentile(HEALTHY.flatMap(loadLatencies), 99);
    figure(
      t,
      "p99 load",
      `${marks
        .slice(0, -1)
        .map((m) => `${m.phase} ${p99(m.phase)} ms`)
        .join(", ")}; all phases with Redis up (${HEALTHY.join(", ")}) ${healthyP99} ms`,
    );
    figure(t, "server RSS", `${rssStart} MiB at start, ${rssEnd} MiB at end`);
    for (const [i, s] of servers.entries()) {
      const outageLogs = s.output.filter((l) => /Redis (unavailable|is back)/.test(l));
      figure(
        t,
        `instance ${i} Redis log lines`,
        outageLogs.map((l) => (JSON.parse(l) as { msg: string }).msg.split(":")[0]).join(" | ") ||
          "none",
      );
    }

    assert.equal(problems.count, 0, `unexpected outcomes: ${problems.summary()}`);
    const at = (p: string) => marks.find((m) => m.phase === p)?.at ?? 0;
    for (const outage of OUTAGES) {
      const began = at(outage);
      const slow = timeline.filter((r) => r.phase === outage && r.ms >= 2 * healthyP99);
      figure(
        t,
        `slow while ${outage}`,
        `${slow.length} of ${loadLatencies(outage).length} requests took 2× the p99 with Redis up or more` +
          (slow.length > 0
            ? `: ${slow
                .slice(0, 30)
                .map((r) => `${r.ms} ms at +${r.startedAt - began}`)
                .join(", ")}`
            : ""),
      );
    }
    for (const outage of OUTAGES) {
      assert.ok(
        p99(outage) < 2 * healthyP99,
        `p99 ${p99(outage)} ms while ${outage}, ${healthyP99} ms while Redis was up`,
      );
    }
    // Enforcement: shared in every window that starts one window or more after Redis returned
    // (and ends before the next outage), and in the baseline.
    const sharedFrom = [
      { from: at(BASELINE), until: at(KILLED) },
      { from: at(RESTARTED) + WINDOW_MS, until: at(HUNG) },
      { from: at(RESUMED) + WINDOW_MS, until: at("end") },
    ];
    // While Redis is away, each probe instance counts on its own: between one and two quotas.
    for (const w of windows.filter((w) => OUTAGES.includes(w.phase))) {
      assert.ok(
        w.successes >= PROBE_MAX && w.successes <= 2 * PROBE_MAX,
        `${w.phase}: ${w.statuses}`,
      );
    }
    for (const { from, until } of sharedFrom) {
      const covered = windows.filter((w) => w.start >= from && w.start + WINDOW_MS <= until);
      assert.ok(covered.length > 0, `no probe window between ${from} and ${until}`);
      for (const w of covered) {
        assert.equal(w.successes, PROBE_MAX, `window at ${w.start} (${w.phase}): ${w.statuses}`);
      }
    }
    for (const s of servers) assert.equal(s.child.exitCode, null, "every instance still runs");
  } finally {
    agent.destroy();
    await Promise.all(servers.map((s) => killIfRunning(s)));
    await redis?.destroy();
    await store?.cleanup();
  }
});
