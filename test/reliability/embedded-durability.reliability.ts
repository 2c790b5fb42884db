import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { cli, type RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, runClients } from "./support/clients.ts";
import { FORMS, listAllForms } from "./support/forms-api.ts";
import { json, keepAliveAgent, RequestFailure, send } from "./support/http-client.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { embeddedStore, type StoreEnv } from "./support/store.ts";
import { latencyLine, Tally } from "./support/tally.ts";
import { createTenants, type Tenant } from "./support/tenants.ts";

const CONCURRENCY = 20;
const ACKNOWLEDGED_CREATES = byProfile(200, 1000);
const KILL_ROUNDS = byProfile(1, 5);
const LOAD_BEFORE_KILL_MS = byProfile(1500, 3000);

/** SIGKILL, and what it left behind in DATA_DIR. */
async function crash(server: RunningServer, dataDir: string) {
  const code = await server.stop("SIGKILL");
  assert.equal(code, null, "killed, not exited");
  return { staleSocket: existsSync(path.join(dataDir, "formdeck.sock")) };
}

/** Starts a server on the store and times it; it must open the store after a crash. */
async function restart(store: StoreEnv) {
  const startedAt = Date.now();
  const server = await startServerWithin(store.env, 60_000);
  return { server, ms: Date.now() - startedAt };
}

test("embedded store: acknowledged creates survive kill -9, and the store opens cleanly after it", async (t) => {
  const store = await embeddedStore();
  const dataDir = store.env.DATA_DIR as string;
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(CONCURRENCY);
  try {
    figure(
      t,
      "profile",
      `${PROFILE} (${ACKNOWLEDGED_CREATES} creates, ${KILL_ROUNDS} kills under load)`,
    );
    figure(t, "store", store.name);
    server = await startServerWithin({ ...store.env, RATE_LIMIT_MAX: "1000000000" });
    const [tenant] = await createTenants(1, store.env, "embedded durability");
    assert.ok(tenant);
    const env = { ...store.env, RATE_LIMIT_MAX: "1000000000" };
    const acknowledged = new Set<string>();

    // 1. N acknowledged creates, then kill -9 right after the last answer.
    const tally = new Tally();
    let next = 0;
    const startedAt = Date.now();
    const running = server;
    await runClients(
      CONCURRENCY,
      () => next >= ACKNOWLEDGED_CREATES,
      async () => {
        const i = next++;
        const reply = await send(running.url, agent, {
          method: "POST",
          path: FORMS,
          key: tenant.key,
          body: { name: `durable ${i}` },
        });
        tally.add("create", reply);
        assert.equal(reply.status, 201, reply.text);
        acknowledged.add(json<{ id: string }>(reply).id);
      },
    );
    figure(
      t,
      "creates before kill -9",
      `${acknowledged.size} in ${Date.now() - startedAt} ms, ${latencyLine(tally.latencies())}`,
    );
    const left = await crash(server, dataDir);
    const first = await restart({ ...store, env });
    server = first.server;
    figure(
      t,
      "after kill -9",
      `stale admin socket left: ${left.staleSocket ? "yes" : "no"}; restarted in ${first.ms} ms`,
    );
    await checkAllThere(t, server.url, agent, tenant, acknowledged, new Set());
    // The CLI reaches the restarted server through its admin socket.
    const keys = await cli<{ organizationId: string }[]>(
      ["key", "list", "--org", tenant.organizationId],
      store.env,
    );
    assert.equal(keys.length, 1);

    // 2. kill -9 while creates are in flight: every acknowledged one survives.
    for (let round = 1; round <= KILL_ROUNDS; round++) {
      const roundTally = new Tally();
      const problems = new Problems();
      const unanswered = new Set<string>();
      const current = server;
      let killed = false;
      const load = runClients(
        CONCURRENCY,
        () => killed,
        async (client, i) => {
          const name = `round ${round} c${client} i${i}`;
          try {
            const reply = await send(current.url, agent, {
              method: "POST",
              path: FORMS,
              key: tenant.key,
              body: { name },
            });
            roundTally.add("create", reply);
            if (reply.status === 201) acknowledged.add(json<{ id: string }>(reply).id);
            else problems.add(`${reply.status} ${reply.text.slice(0, 200)}`);
          } catch (error) {
            if (!(error instanceof RequestFailure)) throw error;
            roundTally.add("create", error);
            unanswered.add(name);
            // Refused or reset: the process is gone. Anything else is a problem.
            if (!killed) problems.add(`before the kill: ${error.message}`);
          }
        },
      );
      await sleep(LOAD_BEFORE_KILL_MS);
      killed = true;
      const leftBehind = await crash(current, dataDir);
      await load;
      const again = await restart({ ...store, env });
      server = again.server;
      figure(
        t,
        `kill -9 under load, round ${round}`,
        `${roundTally.outcomeLine()}; stale socket: ${leftBehind.staleSocket ? "yes" : "no"}; ` +
          `restarted in ${again.ms} ms`,
      );
      assert.equal(problems.count, 0, problems.summary());
      await checkAllThere(t, server.url, agent, tenant, acknowledged, unanswered);
    }
    assert.deepEqual(serverProblems(server, 50), [], "no error logged after the restarts");
  } finally {
    agent.destroy();
    await killIfRunning(server);
    await store.cleanup();
  }
});

/**
 * Every acknowledged form is listed; any other listed form must be one of `unanswered` (sent,
 * then the process died before answering: committed or not, either is correct).
 */
async function checkAllThere(
  t: TestContext,
  url: string,
  agent: ReturnType<typeof keepAliveAgent>,
  tenant: Tenant,
  acknowledged: Set<string>,
  unanswered: Set<string>,
) {
  const { items, total } = await listAllForms(url, agent, tenant.key);
  const listed = new Set(items.map((item) => item.id));
  const lost = [...acknowledged].filter((id) => !listed.has(id));
  const extra = items.filter((item) => !acknowledged.has(item.id));
  figure(
    t,
    "listed after restart",
    `${total} (${acknowledged.size} acknowledged, ${lost.length} lost, ` +
      `${extra.length} committed without an answer)`,
  );
  assert.deepEqual(lost, [], "acknowledged creates lost");
  for (const item of extra) {
    assert.ok(unanswered.has(item.name), `${item.name} is listed but was never sent unanswered`);
    acknowledged.add(item.id);
  }
  const ready = await send(url, agent, { path: "/readyz" });
  assert.equal(ready.status, 200, ready.text);
}
