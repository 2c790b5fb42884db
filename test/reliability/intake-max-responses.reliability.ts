import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems } from "./support/clients.ts";
import { isErrorBody } from "./support/forms-api.ts";
import { json, keepAliveAgent, RequestFailure } from "./support/http-client.ts";
import {
  createForm,
  exportAll,
  listedForms,
  postIntake,
  urlencoded,
} from "./support/intake-api.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { type StoreEnv, sharedPostgres } from "./support/store.ts";
import { latencyLine, Tally } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";

const MAX_RESPONSES = 100;
const SUBMISSIONS = 500;
const ROUNDS = byProfile(3, 10);

test(`maxResponses ${MAX_RESPONSES}: ${SUBMISSIONS} concurrent submissions over two instances on one PostgreSQL, exactly ${MAX_RESPONSES} accepted`, async (t) => {
  let store: StoreEnv | null = null;
  const servers: RunningServer[] = [];
  const agent = keepAliveAgent(SUBMISSIONS);
  try {
    store = await sharedPostgres();
    if (!store) {
      t.skip("needs PostgreSQL (DATABASE_URL or initdb/pg_ctl) for two instances on one store");
      return;
    }
    figure(t, "profile", `${PROFILE} (${ROUNDS} rounds)`);
    figure(t, "store", store.name);
    const env = {
      ...store.env,
      RATE_LIMIT_MAX: "1000000000",
      INTAKE_RATE_LIMIT_MAX: "1000000000",
    };
    servers.push(await startServerWithin(env), await startServerWithin(env));
    const [tenant] = await createTenants(1, store.env, "max responses");
    assert.ok(tenant);
    const [first] = servers as [RunningServer];

    for (let round = 1; round <= ROUNDS; round++) {
      const formId = await createForm(first.url, agent, tenant.key, {
        name: `max responses ${round}`,
        limitResponses: true,
        maxResponses: MAX_RESPONSES,
      });
      const tally = new Tally();
      const problems = new Problems();
      const accepted = new Map<string, string>();
      const startedAt = Date.now();
      await Promise.all(
        Array.from({ length: SUBMISSIONS }, async (_, i) => {
          const server = servers[i % servers.length] as RunningServer;
          const instance = `instance ${i % servers.length}`;
          try {
            const reply = await postIntake(
              server.url,
              agent,
              formId,
              urlencoded([["n", String(i)]]),
              { timeoutMs: 30_000 },
            );
            tally.add(instance, reply);
            if (reply.status === 201) accepted.set(json<{ id: string }>(reply).id, String(i));
            else if (reply.status !== 403 || !isErrorBody(reply.text, ["form_closed"])) {
              problems.add(`${reply.status} ${reply.text.slice(0, 200)}`);
            }
          } catch (error) {
            if (!(error instanceof RequestFailure)) throw error;
            tally.add(instance, error);
            problems.add(error.message);
          }
        }),
      );
      const elapsedMs = Date.now() - startedAt;
      const stored = await exportAll(first.url, agent, tenant.key, formId);
      const listed = (await listedForms(first.url, agent, tenant.key)).get(formId);
      const storedMatch = stored.every(
        (row) => accepted.get(row.id) === (row.answers[0]?.value as string),
      );
      figure(
        t,
        `round ${round}`,
        `${SUBMISSIONS} submissions in ${elapsedMs} ms (${latencyLine(tally.latencies())}): ` +
          `${tally.outcomeLine()}; ${tally.operationLines().join("; ")}; ${stored.length} stored; ` +
          `the list reads isClosed ${listed?.isClosed}, submissions ${listed?.submissions}`,
      );
      assert.equal(problems.count, 0, `unexpected outcomes: ${problems.summary()}`);
      assert.equal(
        tally.count((o) => o === "201"),
        MAX_RESPONSES,
        "exactly the limit accepted",
      );
      assert.equal(
        tally.count((o) => o === "403"),
        SUBMISSIONS - MAX_RESPONSES,
      );
      assert.equal(stored.length, MAX_RESPONSES, "exactly the limit stored");
      assert.ok(storedMatch, "every stored submission is one answered 201, with its answers");
      assert.equal(listed?.isClosed, true);
      assert.equal(listed?.submissions, MAX_RESPONSES);
    }
    for (const server of servers) {
      assert.deepEqual(serverProblems(server, 50), [], "no error logged");
    }
  } finally {
    agent.destroy();
    await Promise.all(servers.map((s) => killIfRunning(s)));
    await store?.cleanup();
  }
});
