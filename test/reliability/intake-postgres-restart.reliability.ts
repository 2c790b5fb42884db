import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, runClients } from "./support/clients.ts";
import { isErrorBody } from "./support/forms-api.ts";
import { json, keepAliveAgent, RequestFailure } from "./support/http-client.ts";
import { createForm, exportAll, postIntake, urlencoded } from "./support/intake-api.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import {
  killIfRunning,
  serverProblems,
  startServerWithin,
  trimRequestLogs,
} from "./support/servers.ts";
import { latencyLine, Tally } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresUnavailable,
} from "./support/throwaway-postgres.ts";

const CLIENTS = 20;
const PACE_MS = 10;
/** Beyond every bound of the service (10 s statement timeout, 5 s to get a connection). */
const CLIENT_TIMEOUT_MS = 20_000;
const RECOVERY_MS = 5000;
const AFTER_EVENT_MS = byProfile(3000, 10_000);
const DOWN_MS = 2000;

test("PostgreSQL restart during intake (fast, immediate, 2 s down): 503 with the spec's body in the gaps only, no acknowledged submission lost", {
  skip: throwawayPostgresUnavailable() ?? false,
}, async (t) => {
  let cluster: ThrowawayPostgres | undefined;
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(64);
  try {
    cluster = await startThrowawayPostgres();
    figure(
      t,
      "profile",
      `${PROFILE} (${CLIENTS} clients, ${AFTER_EVENT_MS / 1000} s after each event)`,
    );
    figure(t, "setup", `throwaway PostgreSQL cluster on port ${cluster.port}, in-process limits`);
    const env = { DATABASE_URL: cluster.url, REDIS_URL: undefined };
    server = await startServerWithin({
      ...env,
      RATE_LIMIT_MAX: "1000000000",
      INTAKE_RATE_LIMIT_MAX: "1000000000",
    });
    const running = server;
    const stopTrimming = trimRequestLogs(server);
    const [tenant] = await createTenants(1, env, "intake postgres restart");
    assert.ok(tenant);
    const forms = [
      await createForm(running.url, agent, tenant.key, { name: "stored" }),
      await createForm(running.url, agent, tenant.key, {
        name: "limited",
        limitResponses: true,
        maxResponses: 1_000_000,
      }),
    ];

    let phase = "baseline";
    const tallies = new Map<string, Tally>();
    const tallyOf = (p: string) => tallies.get(p) ?? (tallies.set(p, new Tally()).get(p) as Tally);
    const problems = new Problems();
    const acknowledged = forms.map(() => new Set<string>());
    const failures: { startedAt: number; endedAt: number }[] = [];
    let successesAfter: { at: number; event: string } | null = null;
    const resumed = new Map<string, number>();
    let stop = false;

    const load = runClients(
      CLIENTS,
      () => stop,
      async (client, i) => {
        const form = client % forms.length;
        const startPhase = phase;
        try {
          const reply = await postIntake(
            running.url,
            agent,
            forms[form] as string,
            urlencoded([["who", `c${client} i${i}`]]),
            { timeoutMs: CLIENT_TIMEOUT_MS },
          );
          tallyOf(startPhase).add("intake", reply);
          if (reply.status === 201) {
            acknowledged[form]?.add(json<{ id: string }>(reply).id);
            if (
              successesAfter &&
              reply.startedAt >= successesAfter.at &&
              !resumed.has(successesAfter.event)
            ) {
              resumed.set(successesAfter.event, reply.endedAt - successesAfter.at);
            }
          } else {
            failures.push({ startedAt: reply.startedAt, endedAt: reply.endedAt });
            if (reply.status !== 503 || !isErrorBody(reply.text, ["service_unavailable"])) {
              problems.add(`${startPhase}: ${reply.status} ${reply.text.slice(0, 300)}`);
            }
          }
        } catch (error) {
          if (!(error instanceof RequestFailure)) throw error;
          tallyOf(startPhase).add("intake", error);
          problems.add(`${startPhase}: ${error.message} after ${error.latencyMs} ms`);
        }
        await sleep(PACE_MS);
      },
    );

    const gaps: { name: string; down: number; back: number }[] = [];
    await sleep(byProfile(1500, 5000));
    const fault = async (name: string, act: () => Promise<void>) => {
      phase = name;
      const down = Date.now();
      await act();
      const back = Date.now();
      gaps.push({ name, down, back });
      successesAfter = { at: back, event: name };
      await sleep(AFTER_EVENT_MS);
    };
    await fault("restart -m fast", () => (cluster as ThrowawayPostgres).restart("fast"));
    await fault("restart -m immediate", () => (cluster as ThrowawayPostgres).restart("immediate"));
    await fault(`down ${DOWN_MS / 1000} s`, async () => {
      await (cluster as ThrowawayPostgres).stop("immediate");
      await sleep(DOWN_MS);
      await (cluster as ThrowawayPostgres).start();
    });
    stop = true;
    await load;
    stopTrimming();

    for (const [p, tally] of tallies) {
      figure(t, `phase ${p}`, `${tally.outcomeLine()}, ${latencyLine(tally.latencies())}`);
    }
    for (const gap of gaps) {
      figure(
        t,
        gap.name,
        `PostgreSQL back after ${gap.back - gap.down} ms; 201 again ${resumed.get(gap.name)} ms after`,
      );
    }
    const outsideGaps = failures.filter(
      (f) => !gaps.some((g) => f.endedAt >= g.down && f.startedAt <= g.back + RECOVERY_MS),
    );
    let storedTotal = 0;
    const lost: string[] = [];
    for (const [i, formId] of forms.entries()) {
      const stored = new Set(
        (await exportAll(running.url, agent, tenant.key, formId)).map((r) => r.id),
      );
      storedTotal += stored.size;
      lost.push(...[...(acknowledged[i] as Set<string>)].filter((id) => !stored.has(id)));
    }
    const acknowledgedTotal = acknowledged.reduce((sum, set) => sum + set.size, 0);
    figure(
      t,
      "submissions",
      `${acknowledgedTotal} acknowledged, ${storedTotal} stored, ${lost.length} lost; ` +
        `${failures.length} answered 503 (${storedTotal - acknowledgedTotal + lost.length} of them stored anyway)`,
    );

    assert.equal(problems.count, 0, `unexpected outcomes: ${problems.summary()}`);
    assert.equal(outsideGaps.length, 0, "errors only during the gaps");
    for (const gap of gaps) {
      const ms = resumed.get(gap.name);
      assert.ok(ms !== undefined && ms < RECOVERY_MS, `${gap.name}: 201 again after ${ms} ms`);
    }
    assert.deepEqual(lost, [], "acknowledged submissions lost");
    assert.equal(server.child.exitCode, null, "the server survived");
    assert.deepEqual(serverProblems(server, 60), [], "no fatal log line");
  } finally {
    agent.destroy();
    if (server && server.child.exitCode !== null) {
      t.diagnostic(
        `the server exited (${server.child.exitCode}):\n${server.output.slice(-45).join("\n")}`,
      );
    }
    await killIfRunning(server);
    await cluster?.destroy();
  }
});
