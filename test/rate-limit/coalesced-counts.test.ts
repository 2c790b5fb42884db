import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { Redis } from "ioredis";
import { coalescedCounts } from "../../src/rate-limit/coalesced-counts.ts";
import { createRedisRateLimiter } from "../../src/rate-limit/redis-rate-limiter.ts";
import { startRedisProxy } from "./redis-proxy.ts";

const REDIS_URL = process.env.REDIS_URL;
const needsRedis = { skip: !REDIS_URL && "REDIS_URL is not set" };

/** A store of counts in this process that records every increment it is asked for. */
function recordingStore() {
  const totals = new Map<string, number>();
  const increments: { key: string; amount: number; expiryMs: number }[] = [];
  return {
    increments,
    totals,
    incrementBy: async (key: string, amount: number, expiryMs: number) => {
      increments.push({ key, amount, expiryMs });
      const total = (totals.get(key) ?? 0) + amount;
      totals.set(key, total);
      return total;
    },
  };
}

test("the counts of one turn are one increment per key, handed out in order", async () => {
  const store = recordingStore();
  const count = coalescedCounts(store.incrementBy);
  const counts = await Promise.all([
    count("a", 3000),
    count("b", 3000),
    count("a", 2999),
    count("a", 2998),
  ]);
  assert.deepEqual(counts, [1, 1, 2, 3]);
  assert.deepEqual(store.increments, [
    { key: "a", amount: 3, expiryMs: 3000 },
    { key: "b", amount: 1, expiryMs: 3000 },
  ]);

  // The next turn's counts go on from the totals, as another increment.
  assert.deepEqual(await Promise.all([count("a", 1000), count("a", 1000)]), [4, 5]);
  assert.equal(store.increments.length, 3);
});

test("an increment that fails rejects every request of its key, and only those", async () => {
  const store = recordingStore();
  const count = coalescedCounts((key, amount, expiryMs) =>
    key === "down"
      ? Promise.reject(new Error("store down"))
      : store.incrementBy(key, amount, expiryMs),
  );
  const outcomes = await Promise.allSettled([count("down", 1), count("up", 1), count("down", 1)]);
  assert.deepEqual(
    outcomes.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : "rejected")),
    ["rejected", 1, "rejected"],
  );
});

test(
  "Redis limiter sends one command per bucket for the requests of one turn",
  needsRedis,
  async (t) => {
    const sent: Buffer[] = [];
    const proxy = await startRedisProxy(REDIS_URL ?? "", {
      toRedis: (chunk, upstream) => {
        sent.push(chunk);
        upstream.write(chunk);
      },
    });
    const keyPrefix = randomUUID();
    const log = { warn: () => {}, info: () => {} };
    const limiter = createRedisRateLimiter({
      redisUrl: proxy.url,
      windowSeconds: 60,
      keyPrefix,
      log,
    });
    const redis = new Redis(REDIS_URL ?? "");
    t.after(async () => {
      await limiter.close();
      await proxy.close();
      redis.disconnect();
    });

    const decisions = await Promise.all([
      ...Array.from({ length: 12 }, () => limiter.consume("key:a", 10)),
      ...Array.from({ length: 3 }, () => limiter.consume("key:b", 10)),
    ]);
    assert.deepEqual(
      decisions.map((decision) => decision.remaining),
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 9, 8, 7],
    );
    assert.deepEqual(
      decisions.map((decision) => decision.allowed),
      [...Array(10).fill(true), false, false, true, true, true],
    );
    const increments = Buffer.concat(sent).toString().split("INCRBY").length - 1;
    assert.equal(increments, 2, "one script call per bucket");

    // Redis holds the whole count, with an expiry, as twelve increments of one would have left it.
    const keys = (await redis.keys(`${keyPrefix}:*`)).sort();
    assert.equal(keys.length, 2);
    assert.deepEqual(await Promise.all(keys.map((key) => redis.get(key))), ["12", "3"]);
    for (const key of keys) assert.ok((await redis.pttl(key)) > 0, `${key} expires`);
  },
);
