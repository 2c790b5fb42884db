import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { test } from "node:test";
import { Redis } from "ioredis";
import { createRateLimiter } from "../../src/rate-limit/create-rate-limiter.ts";
import { createMemoryRateLimiter } from "../../src/rate-limit/memory-rate-limiter.ts";
import type { RateLimiter } from "../../src/rate-limit/rate-limiter.ts";
import { createRedisRateLimiter } from "../../src/rate-limit/redis-rate-limiter.ts";
import { startRedisProxy } from "./redis-proxy.ts";

const REDIS_URL = process.env.REDIS_URL;
const needsRedis = { skip: !REDIS_URL && "REDIS_URL is not set" };

/** 2023-11-14T22:13:20Z: a minute window starts 20 s earlier and ends 40 s later. */
const MINUTE_WINDOW_START_MS = 1_699_999_980_000;
const MINUTE_WINDOW_END_S = 1_700_000_040;

function manualClock(startMs: number) {
  const clock = { nowMs: startMs, now: () => clock.nowMs };
  return clock;
}

function recordingLogger() {
  const warnings: string[] = [];
  const infos: string[] = [];
  return {
    warnings,
    infos,
    warn: (_obj: object, msg: string) => warnings.push(msg),
    info: (_obj: object, msg: string) => infos.push(msg),
  };
}

/** Fails the test instead of hanging when a limiter waits on a dead Redis. */
async function resolvesWithin<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function consumeTimes(limiter: RateLimiter, bucket: string, max: number, times: number) {
  const decisions = [];
  for (let i = 0; i < times; i++) decisions.push(await limiter.consume(bucket, max));
  return decisions;
}

test("memory limiter counts requests in a window and refuses those past max", async () => {
  const clock = manualClock(MINUTE_WINDOW_START_MS + 20_500);
  const limiter = createMemoryRateLimiter({ windowSeconds: 60, now: clock.now });
  const inWindow = { limit: 2, resetAt: MINUTE_WINDOW_END_S, retryAfter: 40 };
  assert.deepEqual(await consumeTimes(limiter, "key:a", 2, 3), [
    { ...inWindow, allowed: true, remaining: 1 },
    { ...inWindow, allowed: true, remaining: 0 },
    { ...inWindow, allowed: false, remaining: 0 },
  ]);
  await limiter.close();
});

test("memory limiter's retryAfter is whole seconds until the window ends, at least 1", async () => {
  const clock = manualClock(MINUTE_WINDOW_START_MS);
  const limiter = createMemoryRateLimiter({ windowSeconds: 60, now: clock.now });
  const retryAfter = async (offsetMs: number) => {
    clock.nowMs = MINUTE_WINDOW_START_MS + offsetMs;
    const decision = await limiter.consume("key:a", 100);
    assert.equal(decision.resetAt, MINUTE_WINDOW_END_S);
    return decision.retryAfter;
  };
  assert.equal(await retryAfter(0), 60);
  assert.equal(await retryAfter(1), 60);
  assert.equal(await retryAfter(59_000), 1);
  assert.equal(await retryAfter(59_999), 1);
  await limiter.close();
});

test("memory limiter serves a bucket again in the next window", async () => {
  const clock = manualClock(MINUTE_WINDOW_START_MS + 59_000);
  const limiter = createMemoryRateLimiter({ windowSeconds: 60, now: clock.now });
  await consumeTimes(limiter, "key:a", 1, 2);
  clock.nowMs = MINUTE_WINDOW_START_MS + 60_000;
  assert.deepEqual(await limiter.consume("key:a", 1), {
    allowed: true,
    limit: 1,
    remaining: 0,
    resetAt: MINUTE_WINDOW_END_S + 60,
    retryAfter: 60,
  });
  await limiter.close();
});

test("memory limiter keeps buckets and their max values apart", async () => {
  const clock = manualClock(MINUTE_WINDOW_START_MS);
  const limiter = createMemoryRateLimiter({ windowSeconds: 60, now: clock.now });
  await consumeTimes(limiter, "key:a", 1, 3);
  const b = await limiter.consume("key:b", 1);
  const c = await limiter.consume("ip:c", 5);
  assert.deepEqual([b.allowed, b.remaining, b.limit], [true, 0, 1]);
  assert.deepEqual([c.allowed, c.remaining, c.limit], [true, 4, 5]);
  await limiter.close();
});

test("memory limiter forgets buckets of past windows", async () => {
  const clock = manualClock(MINUTE_WINDOW_START_MS);
  const limiter = createMemoryRateLimiter({ windowSeconds: 60, now: clock.now });
  for (let i = 0; i < 100; i++) await limiter.consume(`ip:${i}`, 10);
  assert.equal(limiter.trackedBuckets(), 100);
  clock.nowMs += 60_000;
  await limiter.consume("ip:new", 10);
  assert.equal(limiter.trackedBuckets(), 1);
  await limiter.close();
});

test("createRateLimiter counts in process without a Redis URL", async () => {
  const limiter = await createRateLimiter({
    redisUrl: null,
    windowSeconds: 60,
    log: recordingLogger(),
  });
  const decisions = await consumeTimes(limiter, "key:a", 1, 2);
  assert.deepEqual(
    decisions.map((d) => d.allowed),
    [true, false],
  );
  await limiter.close();
});

test("Redis limiters on two instances share one quota per bucket", needsRedis, async (t) => {
  const clock = manualClock(MINUTE_WINDOW_START_MS + 20_500);
  const log = recordingLogger();
  const options = { redisUrl: REDIS_URL ?? "", windowSeconds: 60, keyPrefix: randomUUID(), log };
  const first = createRedisRateLimiter({ ...options, now: clock.now });
  const second = createRedisRateLimiter({ ...options, now: clock.now });
  t.after(() => Promise.all([first.close(), second.close()]));

  const inWindow = { limit: 3, resetAt: MINUTE_WINDOW_END_S, retryAfter: 40 };
  assert.deepEqual(
    [
      await first.consume("key:a", 3),
      await second.consume("key:a", 3),
      await first.consume("key:a", 3),
      await second.consume("key:a", 3),
    ],
    [
      { ...inWindow, allowed: true, remaining: 2 },
      { ...inWindow, allowed: true, remaining: 1 },
      { ...inWindow, allowed: true, remaining: 0 },
      { ...inWindow, allowed: false, remaining: 0 },
    ],
  );
  assert.equal((await second.consume("key:b", 3)).remaining, 2, "other buckets keep their quota");
  assert.deepEqual(log.warnings, []);
});

test("Redis limiter allows exactly max of many concurrent requests", needsRedis, async (t) => {
  const clock = manualClock(MINUTE_WINDOW_START_MS);
  const log = recordingLogger();
  const keyPrefix = randomUUID();
  // Three instances of the service, each taking ten requests for the same bucket at once.
  const instances = [1, 2, 3].map(() =>
    createRedisRateLimiter({
      redisUrl: REDIS_URL ?? "",
      windowSeconds: 60,
      keyPrefix,
      log,
      now: clock.now,
    }),
  );
  t.after(() => Promise.all(instances.map((limiter) => limiter.close())));

  const decisions = await Promise.all(
    instances.flatMap((limiter) => Array.from({ length: 10 }, () => limiter.consume("key:a", 10))),
  );
  assert.equal(decisions.filter((d) => d.allowed).length, 10);
  assert.deepEqual(
    decisions.map((d) => d.remaining).sort((a, b) => a - b),
    [...Array(21).fill(0), 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.deepEqual(log.warnings, []);
});

test("Redis limiter starts a new count when the window rolls over", needsRedis, async (t) => {
  const clock = manualClock(MINUTE_WINDOW_START_MS + 59_000);
  const keyPrefix = randomUUID();
  const limiter = createRedisRateLimiter({
    redisUrl: REDIS_URL ?? "",
    windowSeconds: 60,
    keyPrefix,
    log: recordingLogger(),
    now: clock.now,
  });
  const redis = new Redis(REDIS_URL ?? "");
  t.after(async () => {
    await limiter.close();
    redis.disconnect();
  });

  const decisions = await consumeTimes(limiter, "key:a", 1, 2);
  assert.deepEqual(
    decisions.map((d) => d.allowed),
    [true, false],
  );
  // The window ends in 1 s; the key outlives it by the slack and no more.
  const ttlMs = await redis.pttl(`${keyPrefix}:key:a:${MINUTE_WINDOW_START_MS / 60_000}`);
  assert.ok(ttlMs > 1_000 && ttlMs <= 2_000, `TTL ${ttlMs} ms`);

  clock.nowMs = MINUTE_WINDOW_START_MS + 60_000;
  assert.deepEqual(await limiter.consume("key:a", 1), {
    allowed: true,
    limit: 1,
    remaining: 0,
    resetAt: MINUTE_WINDOW_END_S + 60,
    retryAfter: 60,
  });
});

/** Time within which a limiter facing a dead Redis must answer: a bound against hanging, not a benchmark. */
const PROMPT_MS = 2_000;

test("Redis limiter counts in process, promptly, while Redis refuses connections", async (t) => {
  const clock = manualClock(MINUTE_WINDOW_START_MS + 20_500);
  const log = recordingLogger();
  const limiter = createRedisRateLimiter({
    redisUrl: "redis://127.0.0.1:1",
    windowSeconds: 60,
    log,
    now: clock.now,
  });
  t.after(() => limiter.close());

  const inWindow = { limit: 2, resetAt: MINUTE_WINDOW_END_S, retryAfter: 40 };
  assert.deepEqual(await resolvesWithin(PROMPT_MS, consumeTimes(limiter, "key:a", 2, 3)), [
    { ...inWindow, allowed: true, remaining: 1 },
    { ...inWindow, allowed: true, remaining: 0 },
    { ...inWindow, allowed: false, remaining: 0 },
  ]);
  assert.equal(log.warnings.length, 1);
});

/** A TCP server that accepts connections and never answers, like a SIGSTOPped Redis. */
async function startSilentServer() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    // A client giving up may reset the connection; that is expected here, not a test failure.
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test("Redis limiter counts in process, promptly, while Redis hangs", async (t) => {
  const clock = manualClock(MINUTE_WINDOW_START_MS + 20_500);
  const log = recordingLogger();
  const server = await startSilentServer();
  const limiter = createRedisRateLimiter({
    redisUrl: server.url,
    windowSeconds: 60,
    log,
    now: clock.now,
  });
  t.after(async () => {
    await limiter.close();
    await server.close();
  });

  const inWindow = { limit: 2, resetAt: MINUTE_WINDOW_END_S, retryAfter: 40 };
  assert.deepEqual(await resolvesWithin(PROMPT_MS, consumeTimes(limiter, "key:a", 2, 3)), [
    { ...inWindow, allowed: true, remaining: 1 },
    { ...inWindow, allowed: true, remaining: 0 },
    { ...inWindow, allowed: false, remaining: 0 },
  ]);
  assert.equal(log.warnings.length, 1);
});

/**
 * A TCP proxy to Redis that can stop passing requests on, like Redis being SIGSTOPped (and
 * SIGCONTed) while a client is connected: held requests reach Redis, in order, on resume.
 */
async function startHangableProxy(redisUrl: string) {
  const held: { upstream: net.Socket; chunk: Buffer }[] = [];
  let hung = false;
  const proxy = await startRedisProxy(redisUrl, {
    toRedis: (chunk, upstream) => (hung ? held.push({ upstream, chunk }) : upstream.write(chunk)),
  });
  return {
    ...proxy,
    hang: () => {
      hung = true;
    },
    resume: () => {
      hung = false;
      for (const { upstream, chunk } of held.splice(0)) upstream.write(chunk);
    },
    heldBytes: () => held.reduce((bytes, { chunk }) => bytes + chunk.length, 0),
  };
}

test(
  "Redis limiter skips a hung Redis during the cool-down and returns to it once it answers",
  needsRedis,
  async (t) => {
    const clock = manualClock(MINUTE_WINDOW_START_MS + 20_500);
    const log = recordingLogger();
    const proxy = await startHangableProxy(REDIS_URL ?? "");
    const limiter = createRedisRateLimiter({
      redisUrl: proxy.url,
      windowSeconds: 60,
      keyPrefix: randomUUID(),
      log,
      now: clock.now,
    });
    t.after(async () => {
      await limiter.close();
      await proxy.close();
    });
    const inWindow = { limit: 3, resetAt: MINUTE_WINDOW_END_S, retryAfter: 40 };

    assert.deepEqual(await limiter.consume("key:a", 3), {
      ...inWindow,
      allowed: true,
      remaining: 2,
    });

    proxy.hang();
    // The fallback starts its own count; the request Redis did not answer in time is counted there.
    assert.deepEqual(await resolvesWithin(PROMPT_MS, consumeTimes(limiter, "key:a", 3, 4)), [
      { ...inWindow, allowed: true, remaining: 2 },
      { ...inWindow, allowed: true, remaining: 1 },
      { ...inWindow, allowed: true, remaining: 0 },
      { ...inWindow, allowed: false, remaining: 0 },
    ]);
    assert.equal(log.warnings.length, 1);
    const heldAfterFirstTimeout = proxy.heldBytes();
    await consumeTimes(limiter, "key:a", 3, 5);
    assert.equal(
      proxy.heldBytes(),
      heldAfterFirstTimeout,
      "requests during the cool-down skip Redis",
    );

    proxy.resume();
    clock.nowMs += 1_000;
    // Redis counted the request it answered late, so this one is its third.
    assert.deepEqual(await limiter.consume("key:a", 3), {
      ...inWindow,
      allowed: true,
      remaining: 0,
      retryAfter: 39,
    });
    assert.equal(log.infos.length, 1);
    assert.equal(log.warnings.length, 1);
  },
);
