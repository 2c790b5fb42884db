import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
type Response = Awaited<ReturnType<TestApp["app"]["inject"]>>;

const FORMS = "/api/v1/forms";
const MISSING_ID = "form_AAAAAAAAAAAAAAAAAAAAAA";
const MAX = 3;
const WINDOW_SECONDS = 2;

let testApp: TestApp;
const extraApps: TestApp[] = [];

before(async () => {
  testApp = await buildTestApp({ rateLimitMax: MAX, rateLimitWindowSeconds: WINDOW_SECONDS });
});

after(async () => {
  for (const app of [testApp, ...extraApps]) await app?.close();
  await closeTestDatabase();
});

/** Windows are aligned to the Unix epoch: start right after a boundary so no test straddles one. */
async function startOfWindow(windowSeconds: number, needMs: number) {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await sleep(left + 20);
}

function get(url: string, key?: string, app = testApp) {
  return app.app.inject({ url, headers: key === undefined ? {} : { "api-key": key } });
}

/** The three headers, checked against the window of a request made at `sentAtMs`. */
function assertRateLimitHeaders(res: Response, remaining: number, sentAtMs: number) {
  assert.equal(res.headers["x-ratelimit-limit"], String(MAX));
  assert.equal(res.headers["x-ratelimit-remaining"], String(remaining));
  const reset = res.headers["x-ratelimit-reset"];
  assert.match(String(reset), /^\d+$/, "X-RateLimit-Reset is whole Unix seconds");
  const resetMs = Number(reset) * 1000;
  assert.ok(resetMs > sentAtMs, `reset ${reset} is in the future`);
  assert.ok(resetMs <= sentAtMs + WINDOW_SECONDS * 1000, `reset ${reset} is within the window`);
  return Number(reset);
}

test("headers count down on 200 and on keyed 4xx; the 4th request → 429", async () => {
  const { fullKey, readKey } = await createTenant();
  await startOfWindow(WINDOW_SECONDS, 1500);
  const start = Date.now();
  const ok = await get(FORMS, fullKey);
  assert.equal(ok.statusCode, 200);
  const reset = assertRateLimitHeaders(ok, 2, start);
  const notFound = await get(`${FORMS}/${MISSING_ID}`, fullKey);
  assert.equal(notFound.statusCode, 404);
  assert.equal(assertRateLimitHeaders(notFound, 1, start), reset);
  const invalid = await get(`${FORMS}?page=0`, fullKey);
  assert.equal(invalid.statusCode, 422);
  assert.equal(assertRateLimitHeaders(invalid, 0, start), reset);

  const refused = await get(FORMS, fullKey);
  assert.equal(refused.statusCode, 429);
  const retryAfterS = Number(refused.headers["retry-after"]);
  assert.deepEqual(refused.json(), {
    error: {
      code: "rate_limit_exceeded",
      message: `rate limit: ${MAX} requests per window exceeded; retry in ${retryAfterS} s`,
    },
  });
  assert.equal(assertRateLimitHeaders(refused, 0, start), reset);
  assert.match(String(refused.headers["retry-after"]), /^\d+$/, "Retry-After is whole seconds");
  assert.ok(retryAfterS >= 1 && retryAfterS <= WINDOW_SECONDS, `Retry-After ${retryAfterS}`);
  assert.ok(reset - Date.now() / 1000 <= retryAfterS, "Retry-After reaches the reset");

  // The read key is another key of the same organization: it has its own quota.
  const other = await get(FORMS, readKey);
  assert.equal(other.statusCode, 200);
  assertRateLimitHeaders(other, 2, start);
});

test("a 403 for a read key carries the headers and spends that key's quota", async () => {
  const { readKey } = await createTenant();
  await startOfWindow(WINDOW_SECONDS, 1500);
  const start = Date.now();
  const forbidden = await testApp.app.inject({
    method: "POST",
    url: FORMS,
    headers: { "api-key": readKey },
    payload: { name: "not allowed" },
  });
  assert.equal(forbidden.statusCode, 403);
  assertRateLimitHeaders(forbidden, 2, start);
  assertRateLimitHeaders(await get(FORMS, readKey), 1, start);
});

test("another organization is unaffected; missing or bad keys spend no key's quota", async () => {
  const mine = await createTenant();
  const theirs = await createTenant();
  await startOfWindow(WINDOW_SECONDS, 1500);
  const start = Date.now();
  for (const key of [undefined, "", "fdk_notAKey", `${mine.fullKey}x`]) {
    const res = await get(FORMS, key);
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers["x-ratelimit-remaining"], undefined);
  }
  for (let i = 0; i < MAX; i++) assert.equal((await get(FORMS, mine.fullKey)).statusCode, 200);
  assert.equal((await get(FORMS, mine.fullKey)).statusCode, 429);
  const theirFirst = await get(FORMS, theirs.fullKey);
  assert.equal(theirFirst.statusCode, 200);
  assertRateLimitHeaders(theirFirst, MAX - 1, start);
});

test("the next window serves again", async () => {
  const { fullKey } = await createTenant();
  await startOfWindow(WINDOW_SECONDS, 1500);
  let reset = 0;
  for (let i = 0; i <= MAX; i++) {
    const res = await get(FORMS, fullKey);
    assert.equal(res.statusCode, i < MAX ? 200 : 429);
    reset = Number(res.headers["x-ratelimit-reset"]);
  }
  const waitMs = reset * 1000 - Date.now();
  assert.ok(waitMs <= WINDOW_SECONDS * 1000, `waits ${waitMs} ms`);
  await sleep(Math.max(0, waitMs) + 20);
  const sentAt = Date.now();
  const again = await get(FORMS, fullKey);
  assert.equal(again.statusCode, 200);
  assert.equal(assertRateLimitHeaders(again, MAX - 1, sentAt), reset + WINDOW_SECONDS);
});

test("two instances sharing Redis share one quota per key", {
  skip: !process.env.REDIS_URL && "REDIS_URL is not set",
}, async () => {
  const max = 10;
  const windowSeconds = 3600;
  const config = { rateLimitMax: max, rateLimitWindowSeconds: windowSeconds };
  const first = await buildTestApp(config);
  extraApps.push(first);
  const second = await buildTestApp(config);
  extraApps.push(second);
  const { fullKey } = await createTenant();
  await startOfWindow(windowSeconds, 10_000);
  const responses = await Promise.all(
    Array.from({ length: 30 }, (_, i) => get(FORMS, fullKey, i % 2 ? first : second)),
  );
  const statuses = responses.map((r) => r.statusCode);
  assert.equal(statuses.filter((s) => s === 200).length, max, statuses.join(","));
  assert.equal(statuses.filter((s) => s === 429).length, 30 - max, statuses.join(","));
  const remaining = responses
    .filter((r) => r.statusCode === 200)
    .map((r) => Number(r.headers["x-ratelimit-remaining"]))
    .sort((a, b) => a - b);
  assert.deepEqual(
    remaining,
    Array.from({ length: max }, (_, i) => i),
    "each allowed request has its own place in the shared count",
  );
});
