import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, test } from "node:test";
import { buildApp } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { createMemoryRateLimiter } from "../../src/rate-limit/memory-rate-limiter.ts";
import { closeTestDatabase, testDatabase } from "../helpers.ts";

after(closeTestDatabase);

/** An app with a limiter of its own (in memory, so that its buckets can be counted). */
async function appWith(overrides: Partial<Config>) {
  const config = { ...loadConfig({}), ...overrides };
  const limiter = createMemoryRateLimiter({ windowSeconds: 3600 });
  const app = await buildApp({ config, db: await testDatabase(), limiter });
  app.get("/client-address", async (request) => ({ ip: request.ip }));
  return {
    app,
    limiter,
    /** What `request.ip` is for a request from `remoteAddress` with this X-Forwarded-For. */
    async ipOf(remoteAddress: string, forwardedFor?: string) {
      const reply = await app.inject({
        url: "/client-address",
        remoteAddress,
        headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
      });
      return (reply.json() as { ip: string }).ip;
    },
    /** Status of a keyless list request: 401 while the address has quota, then 429. */
    async keyless(remoteAddress: string, forwardedFor: string) {
      const reply = await app.inject({
        url: "/api/v1/forms",
        remoteAddress,
        headers: { "x-forwarded-for": forwardedFor },
      });
      return reply.statusCode;
    },
    async close() {
      await app.close();
      await limiter.close();
    },
  };
}

const forged = (i: number) => `198.18.${i >> 8}.${i & 255}`;

test("TRUST_PROXY=1 (and true): the client cannot pick a bucket by writing X-Forwarded-For", async () => {
  const built = await appWith({
    trustProxy: loadConfig({ TRUST_PROXY: "true" }).trustProxy,
    rateLimitUnauthenticatedMax: 3,
  });
  try {
    // nginx's $proxy_add_x_forwarded_for: what the client sent, then the address nginx saw.
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(await built.keyless("10.0.0.2", `${forged(i)}, 203.0.113.9`));
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    assert.equal(await built.ipOf("10.0.0.2", "198.18.0.1, 203.0.113.9"), "203.0.113.9");
  } finally {
    await built.close();
  }
});

test("many unique forged X-Forwarded-For values do not make many buckets", async () => {
  const built = await appWith({
    trustProxy: loadConfig({ TRUST_PROXY: "true" }).trustProxy,
    rateLimitUnauthenticatedMax: 1_000_000,
  });
  try {
    const filler = "x".repeat(15_000);
    for (let i = 0; i < 300; i++) {
      const status = await built.keyless("10.0.0.2", `${filler}-${i}, ${forged(i)}-x, 203.0.113.9`);
      assert.equal(status, 401);
    }
    assert.equal(built.limiter.trackedBuckets(), 1);
  } finally {
    await built.close();
  }
});

test("the hop count picks the entry the outermost trusted proxy wrote", async () => {
  const built = await appWith({ trustProxy: 2 });
  try {
    const header = "192.0.2.1, 192.0.2.2, 192.0.2.3";
    assert.equal(await built.ipOf("10.0.0.2", header), "192.0.2.2");
    // Fewer entries than hops: the leftmost one is all there is.
    assert.equal(await built.ipOf("10.0.0.2", "192.0.2.7"), "192.0.2.7");
    assert.equal(await built.ipOf("10.0.0.2"), "10.0.0.2");
  } finally {
    await built.close();
  }
});

test("an entry that is not an IP address falls back to the socket address", async () => {
  const built = await appWith({ trustProxy: loadConfig({ TRUST_PROXY: "true" }).trustProxy });
  try {
    assert.equal(await built.ipOf("10.0.0.2", "not-an-ip-1"), "10.0.0.2");
    for (const entry of ["not-an-ip-1", "", "192.0.2.1:8080", "[2001:db8::1]", "01.2.3.4", "1"]) {
      assert.equal(await built.ipOf("10.0.0.2", `192.0.2.50, ${entry}`), "10.0.0.2", entry);
    }
  } finally {
    await built.close();
  }
});

test("a list of proxies: only those are trusted, the first other address is the client", async () => {
  const built = await appWith({ trustProxy: ["10.0.0.0/8", "::1"] });
  try {
    assert.equal(await built.ipOf("10.0.0.2", "198.51.100.1, 192.0.2.4, 10.1.1.1"), "192.0.2.4");
    assert.equal(await built.ipOf("::1", "192.0.2.5"), "192.0.2.5");
    // A peer that is not one of the proxies is the client, whatever it forwards.
    assert.equal(await built.ipOf("192.0.2.6", "198.51.100.1"), "192.0.2.6");
    // Every entry a trusted proxy: the leftmost one is the client.
    assert.equal(await built.ipOf("10.0.0.2", "10.0.0.3, 10.0.0.4"), "10.0.0.3");
    assert.equal(await built.ipOf("10.0.0.2", "not-an-ip, 10.0.0.4"), "10.0.0.2");
  } finally {
    await built.close();
  }
});

test("without TRUST_PROXY, X-Forwarded-For is ignored", async () => {
  const built = await appWith({});
  try {
    assert.equal(await built.ipOf("192.0.2.8", "198.51.100.1"), "192.0.2.8");
  } finally {
    await built.close();
  }
});

test("addresses are normalized: IPv4-mapped IPv6 to IPv4, IPv6 compressed in lower case", async () => {
  const built = await appWith({ trustProxy: 1 });
  try {
    assert.equal(await built.ipOf("::ffff:192.0.2.9"), "192.0.2.9");
    assert.equal(await built.ipOf("10.0.0.2", "2001:DB8:0:0:0:0:0:1"), "2001:db8::1");
    assert.equal(await built.ipOf("10.0.0.2", "::FFFF:192.0.2.10"), "192.0.2.10");
  } finally {
    await built.close();
  }
});

test("keyless requests are limited per IPv4 address and per IPv6 /64", async () => {
  const built = await appWith({ trustProxy: 1, rateLimitUnauthenticatedMax: 2 });
  const prefix = `2001:db8:${randomInt(65536).toString(16)}:1`;
  try {
    const statuses = [
      await built.keyless("10.0.0.2", `${prefix}::1`),
      await built.keyless("10.0.0.2", `${prefix}:0:0:0:2`),
      await built.keyless("10.0.0.2", `${prefix}:ffff::3`),
      await built.keyless("10.0.0.2", "::ffff:192.0.2.11"),
      await built.keyless("10.0.0.2", "192.0.2.11"),
      await built.keyless("10.0.0.2", "192.0.2.11"),
    ];
    assert.deepEqual(statuses, [401, 401, 429, 401, 401, 429]);
    assert.equal(built.limiter.trackedBuckets(), 2);
  } finally {
    await built.close();
  }
});
