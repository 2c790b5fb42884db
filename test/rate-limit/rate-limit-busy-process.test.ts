import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { createRedisRateLimiter } from "../../src/rate-limit/redis-rate-limiter.ts";
import { startRedisProxy } from "./redis-proxy.ts";

const REDIS_URL = process.env.REDIS_URL;

/**
 * A proxy to Redis in this process that, after passing a reply on, keeps this process busy for
 * `busyMs`: the reply has come in time, but sits unread while the event loop is saturated.
 */
async function startBusyProxy(redisUrl: string) {
  const state = { busyMs: 0 };
  const proxy = await startRedisProxy(redisUrl, {
    toClient(chunk, client) {
      client.write(chunk);
      const until = Date.now() + state.busyMs;
      while (Date.now() < until) {
        // Saturated: nothing else runs, the client's socket is not read.
      }
    },
  });
  return { ...proxy, state };
}

// Found by the reliability suite's load run: under load, a healthy Redis was reported unavailable
// ("Command timed out") and the quota fell back to per-instance counting. The 150 ms timer fired
// in the same turn of the event loop that would have read Redis's reply, which had come in time.
test("a Redis reply that came in time is not taken for an outage while this process is busy", {
  skip: !REDIS_URL && "REDIS_URL is not set",
}, async (t) => {
  const redis = await startBusyProxy(REDIS_URL ?? "");
  const warnings: string[] = [];
  const limiter = createRedisRateLimiter({
    redisUrl: redis.url,
    windowSeconds: 60,
    keyPrefix: randomUUID(),
    log: { warn: (_obj, msg) => warnings.push(msg), info: () => {} },
  });
  t.after(async () => {
    await limiter.close();
    await redis.close();
  });

  assert.equal((await limiter.consume("key:a", 10)).remaining, 9);
  redis.state.busyMs = 400;
  const decision = await limiter.consume("key:a", 10);
  redis.state.busyMs = 0;
  // Redis's count (2), not a fallback's (1) after a timeout.
  assert.equal(decision.remaining, 8);
  assert.deepEqual(warnings, []);
});
