import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, randomInt, runClients } from "./support/clients.ts";
import { FORMS, listAllForms } from "./support/forms-api.ts";
import { json, keepAliveAgent, RequestFailure, send } from "./support/http-client.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import {
  serverProblems,
  startServerWithin,
  stopWithin,
  trimRequestLogs,
} from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { reportLoad, rssMiB, Tally } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";

const CLIENTS = 50;
const ORGANIZATIONS = 10;
const DURATION_MS = byProfile(15_000, 60_000);
const TIMEOUT_MS = 10_000;

interface Expected {
  name: string;
  isClosed: boolean;
  /** An update whose outcome is unknown (no answer): the final state cannot be predicted. */
  unknown: boolean;
}

test(`load: ${CLIENTS} clients list, create and update across ${ORGANIZATIONS} organizations; every acknowledged write is there afterwards`, async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(CLIENTS);
  try {
    figure(t, "profile", `${PROFILE} (load ${DURATION_MS / 1000} s, ${CLIENTS} clients)`);
    figure(t, "store", store.name);
    figure(t, "rate limiter", process.env.REDIS_URL ? "Redis at REDIS_URL" : "in-process");
    server = await startServerWithin({
      ...store.env,
      // Far above what this load can spend: a 429 here would be a failure.
      RATE_LIMIT_MAX: "1000000000",
    });
    const { url } = server;
    const stopTrimming = trimRequestLogs(server);
    const tenants = await createTenants(ORGANIZATIONS, store.env, "load");

    const tally = new Tally();
    const problems = new Problems();
    /** Per organization: acknowledged forms and the state their last acknowledged write gave. */
    const expected = tenants.map(() => new Map<string, Expected>());
    /** Per client: the forms it created; only it updates them, so its updates are ordered. */
    const ownForms: string[][] = Array.from({ length: CLIENTS }, () => []);
    const rssStart = rssMiB(server.child.pid);
    const startedAt = Date.now();
    const deadline = startedAt + DURATION_MS;

    await runClients(
      CLIENTS,
      () => Date.now() >= deadline,
      async (client, iteration) => {
        const org = client % ORGANIZATIONS;
        const { key } = tenants[org] as (typeof tenants)[number];
        const mine = ownForms[client] as string[];
        const roll = Math.random();
        const operation =
          mine.length === 0 || (roll >= 0.4 && roll < 0.7)
            ? "create"
            : roll < 0.4
              ? "list"
              : "update";
        const name = `load c${client} i${iteration} ${operation}`;
        try {
          if (operation === "list") {
            const sort = Math.random() < 0.2 ? "&sort=submissions" : "";
            const reply = await send(url, agent, {
              path: `${FORMS}?page=${1 + randomInt(3)}&pageSize=20${sort}`,
              key,
              timeoutMs: TIMEOUT_MS,
            });
            tally.add(operation, reply);
            if (reply.status !== 200) {
              problems.add(`list: ${reply.status} ${reply.text.slice(0, 200)}`);
            } else if (!Array.isArray(json<{ data: unknown }>(reply).data)) {
              problems.add(`list: no data array: ${reply.text.slice(0, 200)}`);
            }
          } else if (operation === "create") {
            const type = Math.random() < 0.5 ? "endpoint" : "hosted";
            const reply = await send(url, agent, {
              method: "POST",
              path: FORMS,
              key,
              body: { name, type },
              timeoutMs: TIMEOUT_MS,
            });
            tally.add(operation, reply);
            if (reply.status !== 201) {
              problems.add(`create: ${reply.status} ${reply.text.slice(0, 200)}`);
              return;
            }
            const form = json<{ id: string; name: string; organizationId: string }>(reply);
            if (form.name !== name || form.organizationId !== tenants[org]?.organizationId) {
              problems.add(`create: answered ${reply.text.slice(0, 200)} for ${name}`);
            }
            expected[org]?.set(form.id, { name, isClosed: false, unknown: false });
            mine.push(form.id);
          } else {
            const formId = mine[randomInt(mine.length)] as string;
            const isClosed = Math.random() < 0.5;
            const state = expected[org]?.get(formId) as Expected;
            try {
              const reply = await send(url, agent, {
                method: "PATCH",
                path: `${FORMS}/${formId}`,
                key,
                body: { name, isClosed },
                timeoutMs: TIMEOUT_MS,
              });
              tally.add(operation, reply);
              if (reply.status !== 200) {
                problems.add(`update: ${reply.status} ${reply.text.slice(0, 200)}`);
                // A refused update changes nothing; a 5xx might have: the state is not known.
                if (reply.status >= 500) state.unknown = true;
                return;
              }
              const form = json<{ name: string; isClosed: boolean }>(reply);
              if (form.name !== name || form.isClosed !== isClosed) {
                problems.add(`update: answered ${reply.text.slice(0, 200)} for ${name}`);
              }
              Object.assign(state, { name, isClosed });
            } catch (error) {
              state.unknown = true;
              throw error;
            }
          }
        } catch (error) {
          if (!(error instanceof RequestFailure)) throw error;
          tally.add(operation, error);
          problems.add(`${operation}: ${error.message} after ${error.latencyMs} ms`);
        }
      },
    );
    const elapsedS = (Date.now() - startedAt) / 1000;
    const rssEnd = rssMiB(server.child.pid);
    stopTrimming();

    reportLoad(t, tally, elapsedS, { start: rssStart, end: rssEnd });
    const warnings = serverProblems(server, 40);
    figure(t, "server warnings", warnings.length === 0 ? "none" : warnings.join("\n"));

    // Accounting: every acknowledged create is listed, nothing else is, and each form reads as
    // its last acknowledged update left it.
    const verifyStartedAt = Date.now();
    const accounting = new Problems();
    let listed = 0;
    let acknowledged = 0;
    let updatedChecked = 0;
    for (const [org, tenant] of tenants.entries()) {
      const forms = expected[org] as Map<string, Expected>;
      acknowledged += forms.size;
      const { items, total } = await listAllForms(url, agent, tenant.key);
      listed += items.length;
      if (total !== forms.size) {
        accounting.add(`org ${org}: meta.total ${total}, acknowledged creates ${forms.size}`);
      }
      const byId = new Map(items.map((item) => [item.id, item]));
      for (const [id, state] of forms) {
        const item = byId.get(id);
        if (!item) {
          accounting.add(`org ${org}: acknowledged form ${id} (${state.name}) is not listed`);
          continue;
        }
        if (state.unknown) continue;
        if (!state.name.endsWith("create")) updatedChecked++;
        if (item.name !== state.name || item.isClosed !== state.isClosed) {
          accounting.add(
            `org ${org}: form ${id} reads ${JSON.stringify([item.name, item.isClosed])}, its last acknowledged write gave ${JSON.stringify([state.name, state.isClosed])}`,
          );
        }
      }
      for (const item of items) {
        if (!forms.has(item.id))
          accounting.add(`org ${org}: form ${item.id} was never acknowledged`);
      }
    }
    figure(
      t,
      "accounting",
      `${acknowledged} acknowledged creates, ${listed} listed, ${updatedChecked} updated forms checked, in ${Date.now() - verifyStartedAt} ms`,
    );

    assert.equal(problems.count, 0, `unexpected outcomes under load: ${problems.summary()}`);
    assert.equal(accounting.count, 0, `accounting: ${accounting.summary()}`);
    assert.ok(tally.total > 0);
    assert.deepEqual(serverProblems(server, 50), [], "the server logged no error");
    assert.equal(server.child.exitCode, null, "the server is still running");
  } finally {
    agent.destroy();
    if (server) t.diagnostic(`server exit code after SIGTERM: ${await stopWithin(server)}`);
    await store.cleanup();
  }
});
