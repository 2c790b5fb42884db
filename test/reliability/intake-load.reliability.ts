import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, randomInt, runClients } from "./support/clients.ts";
import { FORMS } from "./support/forms-api.ts";
import { json, keepAliveAgent, RequestFailure, send } from "./support/http-client.ts";
import {
  createForm,
  exportAll,
  listedForms,
  postIntake,
  urlencoded,
} from "./support/intake-api.ts";
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
const FORM_COUNT = 10;
/** The last form stores nothing: its submissions are only counted. */
const NEVER_FORM = FORM_COUNT - 1;
const DURATION_MS = byProfile(15_000, 60_000);
const TIMEOUT_MS = 10_000;

test(`intake load: ${CLIENTS} clients submit to ${FORM_COUNT} forms and read them back; every 201 stored (or counted), no 5xx`, async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(CLIENTS);
  try {
    figure(t, "profile", `${PROFILE} (load ${DURATION_MS / 1000} s, ${CLIENTS} clients)`);
    figure(t, "store", store.name);
    figure(t, "rate limiter", process.env.REDIS_URL ? "Redis at REDIS_URL" : "in-process");
    server = await startServerWithin({
      ...store.env,
      // Every client posts from 127.0.0.1: a 429 here would only measure the limit.
      RATE_LIMIT_MAX: "1000000000",
      INTAKE_RATE_LIMIT_MAX: "1000000000",
    });
    const { url } = server;
    const stopTrimming = trimRequestLogs(server);
    const [tenant] = await createTenants(1, store.env, "intake load");
    assert.ok(tenant);
    const forms: string[] = [];
    for (let i = 0; i < FORM_COUNT; i++) {
      const duration = i === NEVER_FORM ? "never" : "forever";
      forms.push(
        await createForm(url, agent, tenant.key, {
          name: `intake load ${i}`,
          submissionStorageDuration: duration,
        }),
      );
    }

    const tally = new Tally();
    const problems = new Problems();
    /** Per form: each acknowledged submission's id and the answers it was sent with. */
    const acknowledged = forms.map(() => new Map<string, [string, string][]>());
    const rssStart = rssMiB(server.child.pid);
    const startedAt = Date.now();
    const deadline = startedAt + DURATION_MS;

    await runClients(
      CLIENTS,
      () => Date.now() >= deadline,
      async (client, iteration) => {
        const form = randomInt(FORM_COUNT);
        const formId = forms[form] as string;
        const stored = [...(acknowledged[form] as Map<string, unknown>).keys()];
        const roll = Math.random();
        const operation =
          roll < 0.7
            ? "intake"
            : roll < 0.82
              ? "list"
              : roll < 0.98 && stored.length > 0 && form !== NEVER_FORM
                ? "get"
                : roll >= 0.98
                  ? "export"
                  : "intake";
        try {
          if (operation === "intake") {
            const answers: [string, string][] = [
              ["client", String(client)],
              ["iteration", String(iteration)],
              ["message", `hello, "world" & ${"é".repeat(randomInt(50))}`],
              ["pick", "a"],
              ["pick", "b"],
            ];
            const reply = await postIntake(url, agent, formId, urlencoded(answers), {
              timeoutMs: TIMEOUT_MS,
            });
            tally.add(operation, reply);
            if (reply.status !== 201) {
              problems.add(`intake: ${reply.status} ${reply.text.slice(0, 200)}`);
              return;
            }
            const { id } = json<{ id: string }>(reply);
            acknowledged[form]?.set(id, answers);
            return;
          }
          const path =
            operation === "list"
              ? `${FORMS}/${formId}/submissions?page=${1 + randomInt(3)}&pageSize=20`
              : operation === "get"
                ? `${FORMS}/${formId}/submissions/${stored[randomInt(stored.length)]}`
                : `${FORMS}/${formId}/submissions/export?format=${Math.random() < 0.5 ? "csv" : "ndjson"}`;
          const reply = await send(url, agent, { path, key: tenant.key, timeoutMs: TIMEOUT_MS });
          tally.add(operation, reply);
          if (reply.status !== 200) {
            problems.add(`${operation}: ${reply.status} ${reply.text.slice(0, 200)}`);
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

    // Accounting: every acknowledged submission exported with exactly the answers sent, nothing
    // else stored, and each form's counter equal to its acknowledged submissions.
    const verifyStartedAt = Date.now();
    const accounting = new Problems();
    let total = 0;
    let exported = 0;
    const listed = await listedForms(url, agent, tenant.key);
    for (const [form, formId] of forms.entries()) {
      const sent = acknowledged[form] as Map<string, [string, string][]>;
      total += sent.size;
      const rows = await exportAll(url, agent, tenant.key, formId);
      exported += rows.length;
      const submissions = listed.get(formId)?.submissions;
      if (submissions !== sent.size) {
        accounting.add(`form ${form}: submissions ${submissions}, acknowledged ${sent.size}`);
      }
      if (form === NEVER_FORM) {
        if (rows.length > 0) accounting.add(`form ${form} (never): ${rows.length} stored`);
        continue;
      }
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const [id, answers] of sent) {
        const row = byId.get(id);
        if (!row) {
          accounting.add(`form ${form}: acknowledged ${id} is not stored`);
          continue;
        }
        const expected = [
          ...answers.slice(0, 3).map(([name, value]) => ({ id: name, label: name, value })),
          { id: "pick", label: "pick", value: ["a", "b"] },
        ];
        if (row.isSpam || JSON.stringify(row.answers) !== JSON.stringify(expected)) {
          accounting.add(`form ${form}: ${id} stored as ${JSON.stringify(row).slice(0, 300)}`);
        }
      }
      for (const row of rows) {
        if (!sent.has(row.id)) accounting.add(`form ${form}: ${row.id} was never acknowledged`);
      }
    }
    figure(
      t,
      "accounting",
      `${total} acknowledged submissions (${acknowledged[NEVER_FORM]?.size} to the form that ` +
        `stores nothing), ${exported} exported, every counter checked, in ${Date.now() - verifyStartedAt} ms`,
    );
    const warnings = serverProblems(server, 40);
    figure(t, "server warnings", warnings.length === 0 ? "none" : warnings.join("\n"));

    assert.equal(problems.count, 0, `unexpected outcomes under load: ${problems.summary()}`);
    assert.equal(accounting.count, 0, `accounting: ${accounting.summary()}`);
    assert.ok(total > 0);
    assert.deepEqual(serverProblems(server, 50), [], "the server logged no error");
    assert.equal(server.child.exitCode, null, "the server is still running");
  } finally {
    agent.destroy();
    if (server) t.diagnostic(`server exit code after SIGTERM: ${await stopWithin(server)}`);
    await store.cleanup();
  }
});
