import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { runClients } from "./support/clients.ts";
import { json, keepAliveAgent, send } from "./support/http-client.ts";
import { createForm, postIntake, urlencoded } from "./support/intake-api.ts";
import { freePort, sleep, waitUntil } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";

const SUBMISSIONS = byProfile(100, 500);
const RECEIVER_DOWN_MS = byProfile(10_000, 120_000);
// The schedule shortened through its setting, never the engine's clock: its waits add up to more
// than the receiver is down, so every delivery is still being tried when it comes back.
const RETRY_DELAYS = byProfile("1,2,3,5,8,13,21", "5,10,20,30,40,60,90");
const SERVER_ENV = {
  RATE_LIMIT_MAX: "1000000000",
  INTAKE_RATE_LIMIT_MAX: "1000000000",
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  DELIVERY_RETRY_DELAYS_SECONDS: RETRY_DELAYS,
};

/** What a receiver got: each event's id and submission, and the attempts it verified. */
class Receiver {
  readonly submissions = new Set<string>();
  readonly eventIds = new Set<string>();
  attempts = 0;
  badSignatures = 0;
  #server: http.Server | null = null;
  readonly #verifier: Webhook;

  readonly port: number;
  /** How long each answer waits: a slow receiver. */
  readonly answerDelayMs: number;

  constructor(secret: string, port: number, answerDelayMs = 0) {
    this.#verifier = new Webhook(secret);
    this.port = port;
    this.answerDelayMs = answerDelayMs;
  }

  async start() {
    this.#server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        const body = Buffer.concat(chunks).toString("utf8");
        this.attempts++;
        try {
          const event = this.#verifier.verify(body, {
            "webhook-id": String(request.headers["webhook-id"]),
            "webhook-timestamp": String(request.headers["webhook-timestamp"]),
            "webhook-signature": String(request.headers["webhook-signature"]),
          }) as { data: { submission: { id: string } } };
          this.eventIds.add(String(request.headers["webhook-id"]));
          this.submissions.add(event.data.submission.id);
        } catch {
          this.badSignatures++;
        }
        await sleep(this.answerDelayMs);
        response.writeHead(204).end();
      });
    });
    const server = this.#server;
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    assert.equal((server.address() as AddressInfo).port, this.port);
  }

  async stop() {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const receiverUrl = (port: number) => `http://127.0.0.1:${port}/hook`;

/** Waits up to `timeoutMs` for every acknowledged submission's event; the check comes after. */
const allArrived = (receiver: Receiver, acknowledged: Set<string>, timeoutMs: number) =>
  waitUntil(
    "every event delivered",
    () => receiver.submissions.size >= acknowledged.size,
    timeoutMs,
    250,
  ).catch(() => {});

/** A form with one enabled webhook to `url`; the webhook's secret. */
async function formWithWebhook(server: RunningServer, key: string, url: string) {
  const agent = keepAliveAgent(2);
  try {
    const formId = await createForm(server.url, agent, key, { name: "webhook reliability" });
    const reply = await send(server.url, agent, {
      method: "POST",
      path: `/api/v1/forms/${formId}/webhooks`,
      key,
      body: { url },
    });
    assert.equal(reply.status, 201, reply.text);
    return { formId, secret: json<{ secret: string }>(reply).secret };
  } finally {
    agent.destroy();
  }
}

/** `count` submissions to the form, 10 at a time; the ids acknowledged with a 201. */
async function submit(server: RunningServer, formId: string, count: number) {
  const agent = keepAliveAgent(10);
  const acknowledged = new Set<string>();
  let next = 0;
  try {
    await runClients(
      10,
      () => next >= count,
      async () => {
        const i = next++;
        const reply = await postIntake(server.url, agent, formId, urlencoded([["n", `${i}`]]));
        assert.equal(reply.status, 201, reply.text);
        acknowledged.add(json<{ id: string }>(reply).id);
      },
    );
  } finally {
    agent.destroy();
  }
  return acknowledged;
}

/** Every acknowledged submission's event arrived, each once by its id, every signature valid. */
function assertAllDelivered(receiver: Receiver, acknowledged: Set<string>) {
  const missing = [...acknowledged].filter((id) => !receiver.submissions.has(id));
  assert.deepEqual(missing, [], "accepted submissions whose event never arrived");
  assert.equal(receiver.badSignatures, 0, "attempts whose signature did not verify");
  assert.equal(receiver.eventIds.size, acknowledged.size, "one webhook-id per submission");
}

test(`the receiver down ${RECEIVER_DOWN_MS / 1000} s, then up: every accepted submission's event arrives, signed`, async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  let receiver: Receiver | undefined;
  try {
    figure(t, "profile", `${PROFILE} (${SUBMISSIONS} submissions, retry waits ${RETRY_DELAYS} s)`);
    figure(t, "store", store.name);
    server = await startServerWithin({ ...store.env, ...SERVER_ENV });
    const [tenant] = await createTenants(1, store.env, "webhook receiver down");
    assert.ok(tenant);
    const port = await freePort();
    const { formId, secret } = await formWithWebhook(server, tenant.key, receiverUrl(port));
    const acknowledged = await submit(server, formId, SUBMISSIONS);
    const downSince = Date.now();
    await sleep(RECEIVER_DOWN_MS);
    receiver = new Receiver(secret, port);
    await receiver.start();
    const upAt = Date.now();
    const running = receiver;
    await allArrived(running, acknowledged, 120_000);
    figure(
      t,
      "delivered",
      `${acknowledged.size} accepted while the receiver was down for ${upAt - downSince} ms; ` +
        `all ${running.submissions.size} events within ${Date.now() - upAt} ms of its return, ` +
        `${running.attempts} attempts received, ${running.eventIds.size} distinct webhook-ids`,
    );
    assertAllDelivered(running, acknowledged);
    assert.deepEqual(serverProblems(server, 50), [], "no error logged");
  } finally {
    await receiver?.stop();
    await killIfRunning(server);
    await store.cleanup();
  }
});

test("kill -9 of the server mid-delivery: after a restart every event arrives, signed", async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  let receiver: Receiver | undefined;
  try {
    figure(t, "store", store.name);
    const env = { ...store.env, ...SERVER_ENV };
    server = await startServerWithin(env);
    const [tenant] = await createTenants(1, store.env, "webhook kill -9");
    assert.ok(tenant);
    const port = await freePort();
    const { formId, secret } = await formWithWebhook(server, tenant.key, receiverUrl(port));
    // A slow receiver, so that the kill finds deliveries under way.
    receiver = new Receiver(secret, port, 200);
    await receiver.start();
    const acknowledged = await submit(server, formId, SUBMISSIONS);
    const before = receiver.submissions.size;
    assert.equal(await server.stop("SIGKILL"), null, "killed, not exited");
    const restartedAt = Date.now();
    server = await startServerWithin(env, 60_000);
    const running = receiver;
    // A job whose process died runs again once its heartbeat is missed: within 60 s.
    await allArrived(running, acknowledged, 90_000);
    const recoveredMs = Date.now() - restartedAt;
    figure(
      t,
      "delivered",
      `${acknowledged.size} accepted, ${before} delivered before kill -9; ` +
        `all ${running.submissions.size} within ${recoveredMs} ms of the restart, ` +
        `${running.attempts} attempts received, ${running.eventIds.size} distinct webhook-ids`,
    );
    assert.ok(before < acknowledged.size, "the kill found deliveries still to make");
    assertAllDelivered(running, acknowledged);
    assert.ok(
      recoveredMs < 60_000,
      `interrupted work ran again ${recoveredMs} ms after the restart`,
    );
  } finally {
    await receiver?.stop();
    await killIfRunning(server);
    await store.cleanup();
  }
});
