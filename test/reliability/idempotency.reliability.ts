import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type RunningServer, startServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { listAllForms } from "./support/forms-api.ts";
import { keepAliveAgent, type Reply, send } from "./support/http-client.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { type StoreEnv, storeFromEnvironment } from "./support/store.ts";
import { latencyLine } from "./support/tally.ts";
import { createTenants, type Tenant } from "./support/tenants.ts";

/**
 * Idempotency-Key against a real server process: concurrent retries of one create under one key
 * must make exactly one form and get one answer, whichever request wins the race.
 */
const RACERS = 20;
const KEYS = byProfile(50, 200);
const PER_KEY = 10;
/** Requests in flight at once in the many-keys run (the machine is shared). */
const IN_FLIGHT = 100;
/** A hang is a failure, not a wait. */
const LIMIT = { timeout: 300_000 };

let store: StoreEnv;
let server: RunningServer;
let tenants: Tenant[];
const agent = keepAliveAgent(IN_FLIGHT);

before(
  async () => {
    store = await storeFromEnvironment();
    server = await startServer({
      ...store.env,
      // Far above what these tests spend: a 429 here would be a failure. LOG_LEVEL stays at info:
      // startServer waits for the "Server listening" line.
      RATE_LIMIT_MAX: "1000000000",
    });
    tenants = await createTenants(3, store.env, "idempotency");
  },
  { timeout: 120_000 },
);

after(async () => {
  agent.destroy();
  await server?.stop("SIGTERM");
  await store?.cleanup();
});

const createUnder = (url: string, tenant: Tenant, key: string, body: unknown) =>
  send(url, agent, {
    method: "POST",
    path: "/api/v1/forms",
    key: tenant.key,
    body,
    headers: { "Idempotency-Key": key },
    timeoutMs: 30_000,
  });

/** What every answer under one key must share. */
const seen = (reply: Reply) => ({
  status: reply.status,
  location: reply.headers.location,
  text: reply.text,
});

test(
  `${RACERS} concurrent requests under one key make one form and get one answer`,
  LIMIT,
  async (t) => {
    const tenant = tenants[0] as Tenant;
    figure(t, "store", store.name);
    figure(t, "profile", PROFILE);
    const body = { name: "raced once", emailsToNotify: ["race@example.com"] };
    const started = Date.now();
    const replies = await Promise.all(
      Array.from({ length: RACERS }, () => createUnder(server.url, tenant, "race-1", body)),
    );
    const elapsed = Date.now() - started;
    const first = replies[0] as Reply;
    assert.equal(first.status, 201, first.text);
    for (const reply of replies) assert.deepEqual(seen(reply), seen(first));
    const fresh = replies.filter((r) => r.headers["idempotent-replayed"] === undefined);
    const replayed = replies.filter((r) => r.headers["idempotent-replayed"] === "true");
    assert.equal(fresh.length, 1, "exactly one request created the form");
    assert.equal(replayed.length, RACERS - 1);
    const forms = (await listAllForms(server.url, agent, tenant.key)).items;
    assert.deepEqual(
      forms.map((form) => form.id),
      [JSON.parse(first.text).id],
    );
    figure(t, "one key, concurrent requests", RACERS);
    figure(t, "forms created", forms.length);
    figure(t, "answers replayed", replayed.length);
    figure(t, "wall time (ms)", elapsed);
    figure(t, "latency", latencyLine(replies.map((r) => r.latencyMs)));
  },
);

test(
  `${KEYS} keys × ${PER_KEY} concurrent requests make exactly ${KEYS} forms`,
  LIMIT,
  async (t) => {
    const tenant = tenants[1] as Tenant;
    // Every key's requests go out together, interleaved with other keys', IN_FLIGHT at a time.
    const jobs = Array.from({ length: KEYS * PER_KEY }, (_, i) => i % KEYS);
    const byKey = new Map<number, Reply[]>();
    const latencies: number[] = [];
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < jobs.length) {
          const k = jobs[next++] as number;
          const reply = await createUnder(server.url, tenant, `many-${k}`, { name: `key ${k}` });
          latencies.push(reply.latencyMs);
          byKey.set(k, [...(byKey.get(k) ?? []), reply]);
        }
      }),
    );
    const elapsed = Date.now() - started;

    const ids = new Set<string>();
    let replayed = 0;
    for (let k = 0; k < KEYS; k++) {
      const replies = byKey.get(k) ?? [];
      assert.equal(replies.length, PER_KEY);
      const first = replies[0] as Reply;
      assert.equal(first.status, 201, first.text);
      for (const reply of replies) assert.deepEqual(seen(reply), seen(first), `key many-${k}`);
      const fresh = replies.filter((r) => r.headers["idempotent-replayed"] === undefined);
      assert.equal(fresh.length, 1, `key many-${k}: exactly one request created`);
      replayed += PER_KEY - fresh.length;
      const form = JSON.parse(first.text);
      assert.equal(form.name, `key ${k}`);
      ids.add(form.id);
    }
    const forms = (await listAllForms(server.url, agent, tenant.key)).items;
    assert.deepEqual(forms.map((form) => form.id).sort(), [...ids].sort());
    figure(t, "keys", KEYS);
    figure(t, "requests", jobs.length);
    figure(t, "forms created", forms.length);
    figure(t, "answers replayed", replayed);
    figure(t, "wall time (ms)", elapsed);
    figure(t, "throughput (requests/s)", Math.round((jobs.length / elapsed) * 1000));
    figure(t, "latency", latencyLine(latencies));
  },
);

test("a key still answers after the server restarts", LIMIT, async (t) => {
  const tenant = tenants[2] as Tenant;
  const body = { name: "survives restarts" };
  const before = await createUnder(server.url, tenant, "restart-1", body);
  assert.equal(before.status, 201, before.text);
  assert.equal(await server.stop("SIGTERM"), 0);
  server = await startServer({ ...store.env, RATE_LIMIT_MAX: "1000000000" });
  const afterRestart = await createUnder(server.url, tenant, "restart-1", body);
  assert.deepEqual(seen(afterRestart), seen(before));
  assert.equal(afterRestart.headers["idempotent-replayed"], "true");
  const forms = (await listAllForms(server.url, agent, tenant.key)).items;
  assert.equal(forms.length, 1);
  figure(t, "replayed after restart", "yes");
});
