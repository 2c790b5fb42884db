import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, runClients } from "./support/clients.ts";
import { FORMS, listAllForms } from "./support/forms-api.ts";
import { json, keepAliveAgent, type Reply, RequestFailure, send } from "./support/http-client.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { latencyLine } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";

const CLIENTS = 30;
const ROUNDS = byProfile(2, 5);
const LOAD_BEFORE_SIGTERM_MS = byProfile(1500, 3000);
const EXIT_WITHIN_MS = 10_000;

interface Sent {
  name: string;
  startedAt: number;
  /** When the whole request had been written to the socket; null if it never was. */
  sentAt: number | null;
  result: Reply | RequestFailure;
}

test(`SIGTERM under create load: requests already sent complete, exit 0 within ${EXIT_WITHIN_MS / 1000} s, no acknowledged write lost`, async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  try {
    figure(t, "profile", `${PROFILE} (${ROUNDS} rounds, ${CLIENTS} clients)`);
    figure(t, "store", store.name);
    const env = { ...store.env, RATE_LIMIT_MAX: "1000000000" };
    server = await startServerWithin(env);
    const [tenant] = await createTenants(1, store.env, "sigterm");
    assert.ok(tenant);
    const acknowledged = new Set<string>();

    for (let round = 1; round <= ROUNDS; round++) {
      const current: RunningServer = server;
      const agent = keepAliveAgent(CLIENTS);
      const sent: Sent[] = [];
      let sigtermAt = Number.POSITIVE_INFINITY;
      let exitedAt: number | null = null;
      const gaveUp = new Set<number>();
      const load = runClients(
        CLIENTS,
        // After SIGTERM a client stops at its first refusal, or when the process is gone.
        () => exitedAt !== null,
        async (client, i) => {
          if (gaveUp.has(client)) {
            await sleep(5);
            return;
          }
          const name = `sigterm r${round} c${client} i${i}`;
          const startedAt = Date.now();
          try {
            const reply = await send(current.url, agent, {
              method: "POST",
              path: FORMS,
              key: tenant.key,
              body: { name },
              timeoutMs: 30_000,
            });
            sent.push({ name, startedAt, sentAt: reply.sentAt, result: reply });
          } catch (error) {
            if (!(error instanceof RequestFailure)) throw error;
            sent.push({ name, startedAt, sentAt: error.sentAt, result: error });
            if (startedAt >= sigtermAt) gaveUp.add(client);
          }
        },
      );
      await sleep(LOAD_BEFORE_SIGTERM_MS);
      sigtermAt = Date.now();
      const exitCode: number | null = await current.stop("SIGTERM");
      exitedAt = Date.now();
      await load;
      agent.destroy();

      // Sorted by when each request had been written: before SIGTERM, it must be answered.
      const problems = new Problems();
      const before = sent.filter((s) => s.sentAt !== null && s.sentAt < sigtermAt);
      const after = sent.filter((s) => !before.includes(s));
      const inFlight = before.filter((s) => s.result.endedAt >= sigtermAt);
      const servedAfter = after.filter((s) => !(s.result instanceof RequestFailure));
      const refusedAfter = new Map<string, number>();
      const unanswered = new Set<string>();
      for (const s of sent) {
        if (s.result instanceof RequestFailure) {
          unanswered.add(s.name);
          if (before.includes(s)) {
            problems.add(
              `sent ${sigtermAt - (s.sentAt as number)} ms before SIGTERM, then ${s.result.message} ` +
                `(${s.result.reusedSocket ? "reused" : "new"} connection)`,
            );
          } else {
            const code = s.result.code;
            refusedAfter.set(code, (refusedAfter.get(code) ?? 0) + 1);
          }
        } else if (s.result.status === 201) {
          acknowledged.add(json<{ id: string }>(s.result).id);
        } else {
          problems.add(`${s.result.status} ${s.result.text.slice(0, 200)}`);
        }
      }
      const exitMs = (exitedAt as number) - sigtermAt;
      figure(
        t,
        `round ${round}`,
        `${sent.length} creates: ${before.length} sent before SIGTERM (${inFlight.length} of them in flight, ` +
          `answered ${latencyLine(inFlight.map((s) => s.result.endedAt - sigtermAt))} after SIGTERM); ` +
          `${after.length} sent after: ${servedAfter.length} served, refused ${[...refusedAfter].map(([c, n]) => `${c}×${n}`).join(" ") || "none"}; ` +
          `exit code ${exitCode} ${exitMs} ms after SIGTERM`,
      );
      assert.equal(problems.count, 0, `requests already sent at SIGTERM: ${problems.summary()}`);
      assert.ok(inFlight.length > 0, "some requests were in flight at SIGTERM");
      assert.equal(exitCode, 0, "exit code");
      assert.ok(exitMs < EXIT_WITHIN_MS, `exited ${exitMs} ms after SIGTERM`);
      assert.deepEqual(serverProblems(current, 50), [], "no error logged while stopping");
      assert.ok(
        current.output.some((line) => line.includes('"msg":"stopped"')),
        "the shutdown ran to its end",
      );

      // Restarted on the same store: every acknowledged create is there, and nothing that was
      // not answered was committed (an answer lost after the commit would be a drain defect).
      server = await startServerWithin(env);
      const checkAgent = keepAliveAgent(4);
      const { items } = await listAllForms(server.url, checkAgent, tenant.key);
      checkAgent.destroy();
      const listed = new Set(items.map((item) => item.id));
      const lost = [...acknowledged].filter((id) => !listed.has(id));
      const committedUnanswered = items.filter((item) => !acknowledged.has(item.id));
      figure(
        t,
        `round ${round} after restart`,
        `${items.length} listed, ${acknowledged.size} acknowledged, ${lost.length} lost, ` +
          `${committedUnanswered.length} committed without an answer`,
      );
      assert.deepEqual(lost, [], "acknowledged creates lost");
      assert.deepEqual(
        committedUnanswered.map((item) => item.name),
        [],
        "forms committed whose request got no answer",
      );
    }
  } finally {
    await killIfRunning(server);
    await store.cleanup();
  }
});
