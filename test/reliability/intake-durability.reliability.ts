import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, runClients } from "./support/clients.ts";
import { json, keepAliveAgent, type Reply, RequestFailure } from "./support/http-client.ts";
import { createForm, exportAll, postIntake, urlencoded } from "./support/intake-api.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { embeddedStore, storeFromEnvironment } from "./support/store.ts";
import { latencyLine, Tally } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";

const LIMITS = { RATE_LIMIT_MAX: "1000000000", INTAKE_RATE_LIMIT_MAX: "1000000000" };
const CONCURRENCY = 20;
const ACKNOWLEDGED = byProfile(200, 1000);
const SIGTERM_CLIENTS = 30;
const SIGTERM_ROUNDS = byProfile(2, 5);
const LOAD_BEFORE_SIGTERM_MS = byProfile(1500, 3000);
const EXIT_WITHIN_MS = 10_000;

/** The ids stored for the form, after a restart: each acknowledged one must be among them. */
async function storedIds(url: string, key: string, formId: string) {
  const agent = keepAliveAgent(2);
  try {
    return new Set((await exportAll(url, agent, key, formId)).map((row) => row.id));
  } finally {
    agent.destroy();
  }
}

test(`embedded store: ${ACKNOWLEDGED} acknowledged submissions, kill -9, all there after a restart`, async (t) => {
  const store = await embeddedStore();
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(CONCURRENCY);
  try {
    figure(t, "profile", `${PROFILE} (${ACKNOWLEDGED} submissions)`);
    const env = { ...store.env, ...LIMITS };
    server = await startServerWithin(env);
    const [tenant] = await createTenants(1, store.env, "intake kill -9");
    assert.ok(tenant);
    const formId = await createForm(server.url, agent, tenant.key, { name: "kill -9" });
    const acknowledged = new Set<string>();
    const tally = new Tally();
    let next = 0;
    const startedAt = Date.now();
    const running = server;
    await runClients(
      CONCURRENCY,
      () => next >= ACKNOWLEDGED,
      async () => {
        const i = next++;
        const reply = await postIntake(running.url, agent, formId, urlencoded([["n", `${i}`]]));
        tally.add("intake", reply);
        assert.equal(reply.status, 201, reply.text);
        acknowledged.add(json<{ id: string }>(reply).id);
      },
    );
    const elapsed = Date.now() - startedAt;
    // Right after the last answer: nothing has had time to reach the disk by chance.
    assert.equal(await server.stop("SIGKILL"), null, "killed, not exited");
    const restartedAt = Date.now();
    server = await startServerWithin(env, 60_000);
    const restartMs = Date.now() - restartedAt;
    const stored = await storedIds(server.url, tenant.key, formId);
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    figure(
      t,
      "kill -9",
      `${acknowledged.size} acknowledged in ${elapsed} ms (${latencyLine(tally.latencies())}), ` +
        `kill -9, restarted in ${restartMs} ms: ${stored.size} stored, ${lost.length} lost`,
    );
    assert.deepEqual(lost, [], "acknowledged submissions lost");
    assert.equal(stored.size, acknowledged.size, "nothing stored that was not acknowledged");
    assert.deepEqual(serverProblems(server, 50), [], "no error logged after the restart");
  } finally {
    agent.destroy();
    await killIfRunning(server);
    await store.cleanup();
  }
});

interface Sent {
  sentAt: number | null;
  result: Reply | RequestFailure;
}

test(`SIGTERM under intake load: requests already sent answered, exit 0 within ${EXIT_WITHIN_MS / 1000} s, no acknowledged submission lost`, async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  try {
    figure(t, "profile", `${PROFILE} (${SIGTERM_ROUNDS} rounds, ${SIGTERM_CLIENTS} clients)`);
    figure(t, "store", store.name);
    const env = { ...store.env, ...LIMITS };
    server = await startServerWithin(env);
    const [tenant] = await createTenants(1, store.env, "intake sigterm");
    assert.ok(tenant);
    const setupAgent = keepAliveAgent(2);
    const formId = await createForm(server.url, setupAgent, tenant.key, { name: "sigterm" });
    setupAgent.destroy();
    const acknowledged = new Set<string>();

    for (let round = 1; round <= SIGTERM_ROUNDS; round++) {
      const current: RunningServer = server;
      const agent = keepAliveAgent(SIGTERM_CLIENTS);
      const sent: Sent[] = [];
      let sigtermAt = Number.POSITIVE_INFINITY;
      let exited = false;
      const gaveUp = new Set<number>();
      const load = runClients(
        SIGTERM_CLIENTS,
        () => exited,
        async (client, i) => {
          if (gaveUp.has(client)) return sleep(5);
          const startedAt = Date.now();
          try {
            const reply = await postIntake(
              current.url,
              agent,
              formId,
              urlencoded([["who", `r${round} c${client} i${i}`]]),
              { timeoutMs: 30_000 },
            );
            sent.push({ sentAt: reply.sentAt, result: reply });
          } catch (error) {
            if (!(error instanceof RequestFailure)) throw error;
            sent.push({ sentAt: error.sentAt, result: error });
            if (startedAt >= sigtermAt) gaveUp.add(client);
          }
        },
      );
      await sleep(LOAD_BEFORE_SIGTERM_MS);
      sigtermAt = Date.now();
      const exitCode = await current.stop("SIGTERM");
      const exitMs = Date.now() - sigtermAt;
      exited = true;
      await load;
      agent.destroy();

      const problems = new Problems();
      const before = sent.filter((s) => s.sentAt !== null && s.sentAt < sigtermAt);
      const inFlight = before.filter((s) => s.result.endedAt >= sigtermAt);
      const after = new Tally();
      for (const s of sent) {
        const isBefore = before.includes(s);
        if (!isBefore) after.add("after SIGTERM", s.result);
        if (s.result instanceof RequestFailure) {
          if (isBefore) problems.add(`sent before SIGTERM, then ${s.result.message}`);
        } else if (s.result.status === 201) {
          acknowledged.add(json<{ id: string }>(s.result).id);
        } else {
          problems.add(`${s.result.status} ${s.result.text.slice(0, 200)}`);
        }
      }
      server = await startServerWithin(env);
      const stored = await storedIds(server.url, tenant.key, formId);
      const lost = [...acknowledged].filter((id) => !stored.has(id));
      const unanswered = [...stored].filter((id) => !acknowledged.has(id));
      figure(
        t,
        `round ${round}`,
        `${sent.length} submissions: ${before.length} sent before SIGTERM (${inFlight.length} in flight, ` +
          `answered ${latencyLine(inFlight.map((s) => s.result.endedAt - sigtermAt))} after it); ` +
          `after it: ${after.outcomeLine()}; exit code ${exitCode} ${exitMs} ms after SIGTERM; ` +
          `after restart ${stored.size} stored, ${acknowledged.size} acknowledged, ${lost.length} lost, ` +
          `${unanswered.length} stored without an answer`,
      );
      assert.equal(problems.count, 0, `requests sent before SIGTERM: ${problems.summary()}`);
      assert.ok(inFlight.length > 0, "some requests were in flight at SIGTERM");
      assert.equal(exitCode, 0, "exit code");
      assert.ok(exitMs < EXIT_WITHIN_MS, `exited ${exitMs} ms after SIGTERM`);
      assert.deepEqual(serverProblems(current, 50), [], "no error logged while stopping");
      assert.deepEqual(lost, [], "acknowledged submissions lost");
      assert.deepEqual(unanswered, [], "submissions stored whose request got no answer");
    }
  } finally {
    await killIfRunning(server);
    await store.cleanup();
  }
});
