import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { freePort, sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { sharedPostgres } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresUnavailable,
} from "./support/throwaway-postgres.ts";
import {
  allArrived,
  assertAllDelivered,
  formWithWebhook,
  Receiver,
  receiverUrl,
  submit,
} from "./support/webhook-receiver.ts";

const SUBMISSIONS = byProfile(200, 1_000);
const SERVER_ENV = {
  RATE_LIMIT_MAX: "1000000000",
  INTAKE_RATE_LIMIT_MAX: "1000000000",
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  DELIVERY_RETRY_DELAYS_SECONDS: "1,1,2,3,5,8,13",
};

test("PostgreSQL restarts mid-delivery (fast, then immediate): every accepted submission's event arrives, signed", {
  skip: throwawayPostgresUnavailable() ?? false,
}, async (t) => {
  let cluster: ThrowawayPostgres | undefined;
  let server: RunningServer | undefined;
  let receiver: Receiver | undefined;
  try {
    cluster = await startThrowawayPostgres();
    figure(t, "profile", `${PROFILE} (${SUBMISSIONS} submissions)`);
    figure(t, "store", `throwaway PostgreSQL cluster on port ${cluster.port}`);
    const storeEnv = { DATABASE_URL: cluster.url, REDIS_URL: undefined };
    server = await startServerWithin({ ...storeEnv, ...SERVER_ENV });
    const [tenant] = await createTenants(1, storeEnv, "webhook postgres restart");
    assert.ok(tenant);
    const port = await freePort();
    const { formId, secret } = await formWithWebhook(server, tenant.key, receiverUrl(port));
    // A slow receiver (32 attempts in flight, 300 ms each), so that the restarts find
    // deliveries under way.
    receiver = new Receiver(secret, port, 300);
    await receiver.start();
    const acknowledged = await submit([server], formId, SUBMISSIONS);
    const before = receiver.submissions.size;
    const restarts: string[] = [];
    for (const mode of ["fast", "immediate"] as const) {
      const down = Date.now();
      await cluster.restart(mode);
      restarts.push(`-m ${mode} back after ${Date.now() - down} ms`);
      await sleep(500);
    }
    const restartedAt = Date.now();
    const running = receiver;
    await allArrived(running, acknowledged, 120_000);
    figure(
      t,
      "delivered",
      `${acknowledged.size} accepted, ${before} delivered before the restarts (${restarts.join(", ")}); ` +
        `all ${running.submissions.size} within ${Date.now() - restartedAt} ms of the last, ` +
        `${running.attempts} attempts received, ${running.eventIds.size} distinct webhook-ids`,
    );
    assert.ok(before < acknowledged.size, "the restarts found deliveries still to make");
    assertAllDelivered(running, acknowledged);
    assert.equal(server.child.exitCode, null, "the server survived the restarts");
  } finally {
    await receiver?.stop();
    await killIfRunning(server);
    await cluster?.destroy();
  }
});

test("two instances on one PostgreSQL: no delivery attempted by both at once, every event arrives", async (t) => {
  const store = await sharedPostgres();
  if (!store) return t.skip("no PostgreSQL here: DATABASE_URL unset and no initdb");
  const servers: RunningServer[] = [];
  let receiver: Receiver | undefined;
  try {
    figure(t, "store", store.name);
    const env = { ...store.env, ...SERVER_ENV };
    servers.push(await startServerWithin(env), await startServerWithin(env));
    const [tenant] = await createTenants(1, store.env, "webhook two instances");
    assert.ok(tenant);
    const port = await freePort();
    const first = servers[0] as RunningServer;
    const { formId, secret } = await formWithWebhook(first, tenant.key, receiverUrl(port));
    // Every event's first attempt fails slowly and its retry comes 1 s later: both instances
    // have jobs of the same deliveries to take, again and again.
    receiver = new Receiver(secret, port, 200, (attempt) => (attempt === 1 ? 503 : 204));
    await receiver.start();
    const acknowledged = await submit(servers, formId, SUBMISSIONS);
    const running = receiver;
    await allArrived(running, acknowledged, 120_000);
    figure(
      t,
      "delivered",
      `${acknowledged.size} accepted over two instances; ${running.attempts} attempts received ` +
        `for ${running.eventIds.size} events, at most ${running.mostAtOnce} of one event at once`,
    );
    assert.equal(running.mostAtOnce, 1, "attempts of one delivery in flight at the same time");
    assertAllDelivered(running, acknowledged);
    assert.ok(running.attempts >= 2 * acknowledged.size, "every event was retried once");
    for (const server of servers) assert.deepEqual(serverProblems(server, 50), []);
  } finally {
    await receiver?.stop();
    for (const server of servers) await killIfRunning(server);
    await store.cleanup();
  }
});
