import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type { RunningServer } from "../../server/server-process.ts";
import { runClients } from "./clients.ts";
import { json, keepAliveAgent, send } from "./http-client.ts";
import { createForm, postIntake, urlencoded } from "./intake-api.ts";
import { sleep, waitUntil } from "./ports.ts";

/**
 * A receiver in the test's process: what it got (each event's id and submission, the attempts
 * it verified) and how many attempts of one event were ever in flight at once.
 */
export class Receiver {
  readonly submissions = new Set<string>();
  readonly eventIds = new Set<string>();
  attempts = 0;
  badSignatures = 0;
  /** The most attempts of one webhook-id that were being answered at the same time. */
  mostAtOnce = 0;
  readonly #inFlight = new Map<string, number>();
  readonly #seen = new Map<string, number>();
  #server: http.Server | null = null;
  readonly #verifier: Webhook;

  readonly port: number;
  /** How long each answer waits: a slow receiver. */
  readonly answerDelayMs: number;
  /** The status of the `n`-th attempt (1, 2 …) of an event: 204 unless told otherwise. */
  readonly statusOf: (attempt: number) => number;

  constructor(secret: string, port: number, answerDelayMs = 0, statusOf = (_: number) => 204) {
    this.#verifier = new Webhook(secret);
    this.port = port;
    this.answerDelayMs = answerDelayMs;
    this.statusOf = statusOf;
  }

  async start() {
    this.#server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      const id = String(request.headers["webhook-id"]);
      const inFlight = (this.#inFlight.get(id) ?? 0) + 1;
      this.#inFlight.set(id, inFlight);
      this.mostAtOnce = Math.max(this.mostAtOnce, inFlight);
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        const body = Buffer.concat(chunks).toString("utf8");
        this.attempts++;
        const attempt = (this.#seen.get(id) ?? 0) + 1;
        this.#seen.set(id, attempt);
        const status = this.statusOf(attempt);
        await sleep(this.answerDelayMs);
        try {
          const event = this.#verifier.verify(body, {
            "webhook-id": id,
            "webhook-timestamp": String(request.headers["webhook-timestamp"]),
            "webhook-signature": String(request.headers["webhook-signature"]),
          }) as { data: { submission: { id: string } } };
          if (status < 300) {
            this.eventIds.add(id);
            this.submissions.add(event.data.submission.id);
          }
        } catch {
          this.badSignatures++;
        }
        this.#inFlight.set(id, (this.#inFlight.get(id) ?? 1) - 1);
        response.writeHead(status).end();
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

export const receiverUrl = (port: number) => `http://127.0.0.1:${port}/hook`;

/** Waits up to `timeoutMs` for every acknowledged submission's event; the check comes after. */
export const allArrived = (receiver: Receiver, acknowledged: Set<string>, timeoutMs: number) =>
  waitUntil(
    "every event delivered",
    () => receiver.submissions.size >= acknowledged.size,
    timeoutMs,
    250,
  ).catch(() => {});

/** A form (with `settings`) with one enabled webhook to `url`; the webhook's secret. */
export async function formWithWebhook(
  server: RunningServer,
  key: string,
  url: string,
  settings: object = {},
) {
  const agent = keepAliveAgent(2);
  try {
    const formId = await createForm(server.url, agent, key, {
      name: "webhook reliability",
      ...settings,
    });
    const reply = await send(server.url, agent, {
      method: "POST",
      path: `/api/v1/forms/${formId}/webhooks`,
      key,
      body: { url },
    });
    assert.equal(reply.status, 201, reply.text);
    const { id, secret } = json<{ id: string; secret: string }>(reply);
    return { formId, webhookId: id, secret };
  } finally {
    agent.destroy();
  }
}

/** `count` submissions to the forms in turn, 10 at a time; the ids acknowledged with a 201. */
export async function submit(servers: RunningServer[], formId: string, count: number) {
  const agent = keepAliveAgent(10);
  const acknowledged = new Set<string>();
  let next = 0;
  try {
    await runClients(
      10,
      () => next >= count,
      async () => {
        const i = next++;
        const server = servers[i % servers.length] as RunningServer;
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
export function assertAllDelivered(receiver: Receiver, acknowledged: Set<string>) {
  const missing = [...acknowledged].filter((id) => !receiver.submissions.has(id));
  assert.deepEqual(missing, [], "accepted submissions whose event never arrived");
  assert.equal(receiver.badSignatures, 0, "attempts whose signature did not verify");
  assert.equal(receiver.eventIds.size, acknowledged.size, "one webhook-id per submission");
}
