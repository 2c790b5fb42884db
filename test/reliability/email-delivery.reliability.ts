import assert from "node:assert/strict";
import { test } from "node:test";
import { SmtpSink } from "../notifications/smtp-sink.ts";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { json, keepAliveAgent, send } from "./support/http-client.ts";
import { createForm } from "./support/intake-api.ts";
import { sleep, waitUntil } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";
import { submit } from "./support/webhook-receiver.ts";

const SUBMISSIONS = byProfile(100, 500);
const SINK_DOWN_MS = byProfile(10_000, 120_000);
// Shortened through the setting, never the engine's clock: the waits add up to more than the
// sink is down, so every email is still being tried when it comes back.
const RETRY_DELAYS = byProfile("1,2,3,5,8,13,21", "5,10,20,30,40,60,90");
const FORM_NAME = "email reliability";

interface EmailRecord {
  status: string;
  attempts: number;
  lastError: string | null;
}

/** Each acknowledged submission's emails, as the API lists them. */
async function emailsOf(server: RunningServer, key: string, formId: string, ids: Set<string>) {
  const agent = keepAliveAgent(4);
  try {
    const records: EmailRecord[][] = [];
    for (const id of ids) {
      const reply = await send(server.url, agent, {
        method: "GET",
        path: `/api/v1/forms/${formId}/submissions/${id}/emails`,
        key,
      });
      assert.equal(reply.status, 200, reply.text);
      records.push(json<{ data: EmailRecord[] }>(reply).data);
    }
    return records;
  } finally {
    agent.destroy();
  }
}

/** How many records have each status and attempt count, e.g. `sent after 3: 12`. */
function tally(records: EmailRecord[][]) {
  const counts = new Map<string, number>();
  for (const record of records.flat()) {
    const key = `${record.status} after ${record.attempts}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${key}: ${n}`).join(", ");
}

/** A server sending to `sink`, a tenant, and a form notifying its owner. */
async function setUp(sink: SmtpSink, store: Awaited<ReturnType<typeof storeFromEnvironment>>) {
  const server = await startServerWithin({
    ...store.env,
    RATE_LIMIT_MAX: "1000000000",
    INTAKE_RATE_LIMIT_MAX: "1000000000",
    SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    MAIL_FROM: "Forms <forms@formdeck.test>",
    DELIVERY_RETRY_DELAYS_SECONDS: RETRY_DELAYS,
  });
  const [tenant] = await createTenants(1, store.env, "email reliability");
  assert.ok(tenant);
  const agent = keepAliveAgent(2);
  const formId = await createForm(server.url, agent, tenant.key, {
    name: FORM_NAME,
    emailsToNotify: ["owner@formdeck.test"],
  });
  agent.destroy();
  return { server, key: tenant.key, formId };
}

test(`the SMTP server down ${SINK_DOWN_MS / 1000} s, then up: every email sent`, async (t) => {
  const store = await storeFromEnvironment();
  const sink = new SmtpSink();
  let server: RunningServer | undefined;
  try {
    figure(t, "profile", `${PROFILE} (${SUBMISSIONS} submissions, retry waits ${RETRY_DELAYS} s)`);
    figure(t, "store", store.name);
    // Its port, kept for when it comes back.
    await sink.up();
    await sink.down();
    const setup = await setUp(sink, store);
    server = setup.server;
    const acknowledged = await submit([server], setup.formId, SUBMISSIONS);
    await sleep(SINK_DOWN_MS);
    await sink.up();
    const upAt = Date.now();
    const received = () => sink.withSubject(`New submission: ${FORM_NAME}`).length;
    await waitUntil("every email sent", () => received() >= acknowledged.size, 120_000, 250);
    const sentWithin = Date.now() - upAt;
    // The last records are written just after their message is accepted.
    await sleep(1_000);
    const records = await emailsOf(server, setup.key, setup.formId, acknowledged);
    figure(
      t,
      "sent",
      `${acknowledged.size} accepted while the SMTP server was down; all ${received()} messages ` +
        `received within ${sentWithin} ms of its return; records: ${tally(records)}`,
    );
    assert.equal(received(), acknowledged.size, "one message per accepted submission");
    for (const emails of records) {
      assert.equal(emails.length, 1);
      assert.equal(emails[0]?.status, "sent");
      assert.ok((emails[0]?.attempts ?? 0) >= 2, "the first attempt found the server down");
    }
    assert.deepEqual(
      serverProblems(server, 50),
      [],
      "no error logged (failed attempts are warnings)",
    );
  } finally {
    await sink.down();
    await killIfRunning(server);
    await store.cleanup();
  }
});

test("SMTP 5xx: every email failed at once, after one attempt, and never tried again", async (t) => {
  const store = await storeFromEnvironment();
  const sink = new SmtpSink();
  let server: RunningServer | undefined;
  try {
    figure(t, "store", store.name);
    await sink.up();
    sink.failNext.push(...Array.from({ length: SUBMISSIONS }, () => 554));
    const setup = await setUp(sink, store);
    server = setup.server;
    const started = Date.now();
    const acknowledged = await submit([server], setup.formId, SUBMISSIONS);
    await waitUntil("every message refused", () => sink.dataStarted >= SUBMISSIONS, 60_000, 100);
    const refusedWithin = Date.now() - started;
    // Past the first retry's wait: a 5xx must not have one.
    await sleep(Number(RETRY_DELAYS.split(",")[0]) * 1000 + 2_000);
    const records = await emailsOf(server, setup.key, setup.formId, acknowledged);
    figure(
      t,
      "failed",
      `${acknowledged.size} accepted, all refused with 554 within ${refusedWithin} ms; ` +
        `records: ${tally(records)}; ${sink.dataStarted} messages offered in all`,
    );
    for (const emails of records) {
      assert.deepEqual(
        emails.map(({ status, attempts, lastError }) => ({ status, attempts, lastError })),
        [{ status: "failed", attempts: 1, lastError: "554 try again later" }],
      );
    }
    assert.equal(sink.dataStarted, SUBMISSIONS, "no message offered twice");
    assert.equal(sink.withSubject(`New submission: ${FORM_NAME}`).length, 0);
  } finally {
    await sink.down();
    await killIfRunning(server);
    await store.cleanup();
  }
});
