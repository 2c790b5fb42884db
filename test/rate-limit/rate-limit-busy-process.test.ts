import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { createRateLimiter } from "../../src/rate-limit/create-rate-limiter.ts";
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

// Found when the app's start took longer on a slower machine: a limiter whose first connection
// was still pending while the app was being built timed out connecting to a healthy Redis, and
// two instances on one Redis each counted a key's quota on their own.
test("a limiter made by createRateLimiter is connected: a busy start after it is not an outage", {
  skip: !REDIS_URL && "REDIS_URL is not set",
}, async (t) => {
  const warnings: string[] = [];
  const log = { warn: (_obj: object, msg: string) => warnings.push(msg), info: () => {} };
  const options = { redisUrl: REDIS_URL ?? "", windowSeconds: 60, log };
  const first = await createRateLimiter(options);
  const second = await createRateLimiter(options);
  t.after(async () => {
    await first.close();
    await second.close();
  });
  // The app being built: a turn of the event loop (a connection still pending would have been
  // opened by now), then the loop busy for longer than the connection timeout (500 ms).
  await new Promise((resolve) => setImmediate(resolve));
  const until = Date.now() + 800;
  while (Date.now() < until) {
    // Busy.
  }
  const bucket = `busy-start-${randomUUID()}`;
  const remaining = [];
  for (const limiter of [first, second, first, second]) {
    remaining.push((await limiter.consume(bucket, 10)).remaining);
  }
  // One count in Redis for both, not one per instance.
  assert.deepEqual(remaining, [9, 8, 7, 6]);
  assert.deepEqual(warnings, []);
});
