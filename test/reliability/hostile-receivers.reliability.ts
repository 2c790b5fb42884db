import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { json, keepAliveAgent, send } from "./support/http-client.ts";
import { waitUntil } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";
import { formWithWebhook, receiverUrl, submit } from "./support/webhook-receiver.ts";

const SUBMISSIONS = byProfile(20, 100);
const TEN_MB = Buffer.alloc(10 * 1024 * 1024, "x");
/** The attempt's limit (notifications.md §3), and what a loaded machine may add to it. */
const ATTEMPT_MS = 15_000;
const SLACK_MS = 3_000;

interface Attempt {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}
interface Delivery {
  status: string;
  attempts: Attempt[];
  nextAttemptAt: string | null;
}

/** A receiver in the test's process; `hits` counts the requests it got. */
async function hostile(handle: (response: http.ServerResponse) => void) {
  const state = { hits: 0, port: 0, server: http.createServer() };
  state.server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    state.hits++;
    request.resume();
    request.on("end", () => handle(response));
  });
  await new Promise<void>((resolve) => state.server.listen(0, "127.0.0.1", resolve));
  state.port = (state.server.address() as AddressInfo).port;
  return state;
}

const rssMb = (server: RunningServer) => {
  const status = readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
};

async function deliveriesOf(server: RunningServer, key: string, formId: string, hookId: string) {
  const agent = keepAliveAgent(1);
  try {
    const reply = await send(server.url, agent, {
      method: "GET",
      path: `/api/v1/forms/${formId}/webhooks/${hookId}/deliveries?pageSize=100`,
      key,
    });
    assert.equal(reply.status, 200, reply.text);
    return json<{ data: Delivery[] }>(reply).data;
  } finally {
    agent.destroy();
  }
}

test("receivers that never answer, answer 10 MB, or redirect to 127.0.0.1: bounded time and memory, failed attempts", async (t) => {
  const store = await storeFromEnvironment();
  const silent = await hostile(() => {});
  const huge = await hostile((response) => response.writeHead(500).end(TEN_MB));
  const trap = await hostile((response) => response.writeHead(204).end());
  const redirect = await hostile((response) =>
    response.writeHead(302, { location: `${receiverUrl(trap.port)}?stolen=1` }).end(),
  );
  let server: RunningServer | undefined;
  try {
    figure(t, "profile", `${PROFILE} (${SUBMISSIONS} submissions to each receiver)`);
    figure(t, "store", store.name);
    server = await startServerWithin({
      ...store.env,
      RATE_LIMIT_MAX: "1000000000",
      INTAKE_RATE_LIMIT_MAX: "1000000000",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      // The first attempt only: the next ones would come long after the test.
      DELIVERY_RETRY_DELAYS_SECONDS: "3600,3600,3600,3600,3600,3600,3600",
    });
    const running = server;
    const [tenant] = await createTenants(1, store.env, "hostile receivers");
    assert.ok(tenant);
    const forms: Awaited<ReturnType<typeof formWithWebhook>>[] = [];
    for (const receiver of [silent, huge, redirect]) {
      forms.push(await formWithWebhook(running, tenant.key, receiverUrl(receiver.port)));
    }
    const rssBefore = rssMb(running);
    let rssMost = rssBefore;
    const sampler = setInterval(() => {
      rssMost = Math.max(rssMost, rssMb(running));
    }, 50);
    const started = Date.now();
    for (const form of forms) await submit([running], form.formId, SUBMISSIONS);
    const attempted = async () => {
      const all = await Promise.all(
        forms.map((f) => deliveriesOf(running, tenant.key, f.formId, f.webhookId)),
      );
      return all.every(
        (list) => list.length === SUBMISSIONS && list.every((d) => d.attempts.length > 0),
      )
        ? all
        : null;
    };
    let settled: Delivery[][] = [];
    await waitUntil(
      "every first attempt recorded",
      async () => {
        settled = (await attempted()) ?? [];
        return settled.length > 0;
      },
      120_000,
      500,
    );
    clearInterval(sampler);
    const elapsed = Date.now() - started;
    const [silentDeliveries, hugeDeliveries, redirectDeliveries] = [0, 1, 2].map(
      (i) => settled[i] ?? [],
    ) as [Delivery[], Delivery[], Delivery[]];
    const durations = (list: Delivery[]) => list.map((d) => d.attempts[0]?.durationMs ?? 0);
    figure(
      t,
      "bounded",
      `${3 * SUBMISSIONS} first attempts recorded within ${elapsed} ms; never answering: ` +
        `${Math.min(...durations(silentDeliveries))} to ${Math.max(...durations(silentDeliveries))} ms each; ` +
        `10 MB answers: up to ${Math.max(...durations(hugeDeliveries))} ms; ` +
        `server RSS ${rssBefore.toFixed(0)} → ${rssMost.toFixed(0)} MB at most; ` +
        `the redirect's target hit ${trap.hits} times`,
    );
    for (const delivery of silentDeliveries) {
      const [attempt] = delivery.attempts;
      assert.equal(delivery.status, "pending");
      assert.ok(delivery.nextAttemptAt, "the next attempt is scheduled");
      assert.equal(attempt?.statusCode, null);
      assert.equal(attempt?.error, "timed out after 15 s");
      assert.ok((attempt?.durationMs ?? 0) < ATTEMPT_MS + SLACK_MS, `${attempt?.durationMs} ms`);
    }
    for (const delivery of hugeDeliveries) {
      const [attempt] = delivery.attempts;
      assert.equal(delivery.status, "pending");
      assert.equal(attempt?.statusCode, 500);
      assert.equal(attempt?.error, "the receiver answered 500");
      assert.equal(attempt?.responseBody, "x".repeat(4_096));
    }
    for (const delivery of redirectDeliveries) {
      const [attempt] = delivery.attempts;
      assert.equal(delivery.status, "pending");
      assert.equal(attempt?.statusCode, 302);
      assert.equal(attempt?.error, "the receiver answered 302");
    }
    assert.equal(trap.hits, 0, "the redirect was never followed");
    assert.ok(rssMost - rssBefore < 100, `RSS grew ${(rssMost - rssBefore).toFixed(0)} MB`);
    assert.deepEqual(serverProblems(running, 50), [], "no error logged");
  } finally {
    await killIfRunning(server);
    for (const receiver of [silent, huge, trap, redirect]) {
      receiver.server.closeAllConnections();
      receiver.server.close();
    }
    await store.cleanup();
  }
});
