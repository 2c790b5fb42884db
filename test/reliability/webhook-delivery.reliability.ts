import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { freePort, sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";
import {
  allArrived,
  assertAllDelivered,
  formWithWebhook,
  Receiver,
  receiverUrl,
  submit,
} from "./support/webhook-receiver.ts";

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
    const acknowledged = await submit([server], formId, SUBMISSIONS);
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
    const acknowledged = await submit([server], formId, SUBMISSIONS);
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
