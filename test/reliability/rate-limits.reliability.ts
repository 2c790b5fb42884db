import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { FORMS, isErrorBody } from "./support/forms-api.ts";
import { keepAliveAgent, type Reply, send } from "./support/http-client.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { type StoreEnv, sharedPostgres } from "./support/store.ts";
import { latencyLine } from "./support/tally.ts";
import { createTenants } from "./support/tenants.ts";

const MAX = 10;
const WINDOW_SECONDS = 2;
const WINDOW_MS = WINDOW_SECONDS * 1000;
const BURST = 30;
const BAD_KEY_REQUESTS = 10;
const ROUNDS = byProfile(3, 10);

const skip = process.env.REDIS_URL
  ? false
  : "REDIS_URL is not set: two instances share one quota only through Redis";

/** Sleeps until `offsetMs` after the start of the next window (windows are aligned to the epoch). */
async function nextWindow(offsetMs = 30) {
  const now = Date.now();
  const start = (Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS;
  await sleep(start + offsetMs - now);
  return { start, end: start + WINDOW_MS };
}

const header = (reply: Reply, name: string) => reply.headers[name] as string | undefined;

/** Checks the rate-limit headers of `reply` against the window ending at `windowEnd` (ms). */
function checkHeaders(reply: Reply, windowEnd: number, what: string) {
  assert.equal(header(reply, "x-ratelimit-limit"), String(MAX), `${what}: X-RateLimit-Limit`);
  assert.equal(
    header(reply, "x-ratelimit-reset"),
    String(windowEnd / 1000),
    `${what}: X-RateLimit-Reset is the end of the window, in Unix seconds`,
  );
  assert.match(header(reply, "x-ratelimit-remaining") ?? "", /^\d+$/, `${what}: Remaining`);
}

test(`rate limits: ${BURST} concurrent requests of one key over two instances sharing Redis get exactly ${MAX} through per ${WINDOW_SECONDS}-s window`, {
  skip,
}, async (t) => {
  const servers: RunningServer[] = [];
  const agent = keepAliveAgent(128);
  let store: StoreEnv | null = null;
  try {
    store = await sharedPostgres();
    if (!store) {
      t.skip("needs PostgreSQL (DATABASE_URL or initdb/pg_ctl) for two instances on one store");
      return;
    }
    figure(t, "profile", `${PROFILE} (${ROUNDS} windows)`);
    figure(t, "setup", `2 instances; store: ${store.name}; shared Redis at REDIS_URL`);
    const env = {
      ...store.env,
      REDIS_URL: process.env.REDIS_URL,
      RATE_LIMIT_MAX: String(MAX),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    };
    servers.push(await startServerWithin(env), await startServerWithin(env));
    const urls = servers.map((s) => s.url);
    const [mine, theirs] = await createTenants(2, store.env, "quota");
    assert.ok(mine && theirs);
    // Keep-alive connections to both instances, their database pools and Redis connections are
    // up before timing: a burst as large as the measured ones, with the other key, in an earlier
    // window (each round waits for a window of its own).
    const warmUp = await Promise.all(
      Array.from({ length: BURST + BAD_KEY_REQUESTS }, (_, i) =>
        send(
          urls[i % 2] as string,
          agent,
          i < BURST ? { path: FORMS, key: theirs.key } : { path: FORMS },
        ),
      ),
    );
    for (const reply of warmUp) assert.ok([200, 401, 429].includes(reply.status), reply.text);

    for (let round = 1; round <= ROUNDS; round++) {
      const window = await nextWindow();
      const burstStart = Date.now();
      const keyed: Promise<Reply>[] = Array.from({ length: BURST }, (_, i) =>
        send(urls[i % 2] as string, agent, { path: FORMS, key: mine.key }),
      );
      // Missing and invalid keys, sent in the same instant: they must spend no key's quota.
      const unknown: Promise<Reply>[] = Array.from({ length: BAD_KEY_REQUESTS }, (_, i) =>
        send(urls[i % 2] as string, agent, {
          path: FORMS,
          ...(i % 2 ? { key: `fdk_${randomBytes(32).toString("base64url")}` } : {}),
        }),
      );
      const [replies, refusedKeys]: [Reply[], Reply[]] = await Promise.all([
        Promise.all(keyed),
        Promise.all(unknown),
      ]);
      const other = await send(urls[round % 2] as string, agent, { path: FORMS, key: theirs.key });
      const burstEnd = Date.now();
      assert.ok(
        burstEnd < window.end,
        `the burst took ${burstEnd - burstStart} ms and ran past its ${WINDOW_MS} ms window`,
      );

      const ok = replies.filter((r) => r.status === 200);
      const limited = replies.filter((r) => r.status === 429);
      const perInstance = urls.map(
        (_, s) => replies.filter((r, i) => i % 2 === s && r.status === 200).length,
      );
      figure(
        t,
        `window ${round}`,
        `${ok.length}×200 ${limited.length}×429 (200s per instance: ${perInstance.join("+")}), ` +
          `${refusedKeys.filter((r) => r.status === 401).length}×401 for bad keys, other key ${other.status} ` +
          `remaining ${header(other, "x-ratelimit-remaining")}; burst ${burstEnd - burstStart} ms, ` +
          latencyLine(replies.map((r) => r.latencyMs)),
      );
      assert.equal(ok.length, MAX, `successes: ${replies.map((r) => r.status).join(",")}`);
      assert.equal(limited.length, BURST - MAX, "429s");
      for (const reply of replies) checkHeaders(reply, window.end, `a ${reply.status}`);
      assert.deepEqual(
        ok.map((r) => Number(header(r, "x-ratelimit-remaining"))).sort((a, b) => a - b),
        Array.from({ length: MAX }, (_, i) => i),
        "each success has its own place in the shared count",
      );
      for (const reply of limited) {
        assert.equal(header(reply, "x-ratelimit-remaining"), "0");
        assert.ok(isErrorBody(reply.text, ["rate_limit_exceeded"]), reply.text);
        const retryAfter = header(reply, "retry-after") ?? "";
        assert.match(retryAfter, /^\d+$/, "Retry-After is whole seconds");
        // Whole seconds until the window ends, seen from some instant while the request was out.
        const earliest = Math.max(1, Math.ceil((window.end - reply.endedAt) / 1000));
        const latest = Math.ceil((window.end - reply.startedAt) / 1000);
        assert.ok(
          Number(retryAfter) >= earliest && Number(retryAfter) <= latest,
          `Retry-After ${retryAfter} is not between ${earliest} and ${latest}`,
        );
      }
      for (const reply of refusedKeys) {
        assert.equal(reply.status, 401, reply.text);
        assert.ok(isErrorBody(reply.text, ["unauthorized"]), reply.text);
        assert.equal(header(reply, "x-ratelimit-remaining"), undefined, "no quota on a 401");
      }
      assert.equal(other.status, 200, "another organization's key is unaffected");
      checkHeaders(other, window.end, "the other key");
      assert.equal(header(other, "x-ratelimit-remaining"), String(MAX - 1));

      // The next window serves again, from a full quota.
      await sleep(window.end + 30 - Date.now());
      const again = await send(urls[(round + 1) % 2] as string, agent, {
        path: FORMS,
        key: mine.key,
      });
      assert.equal(again.status, 200, "the next window serves again");
      checkHeaders(again, window.end + WINDOW_MS, "next window");
      assert.equal(header(again, "x-ratelimit-remaining"), String(MAX - 1));
    }

    const warnings = servers.flatMap((s) => serverProblems(s));
    figure(t, "server warnings", warnings.length === 0 ? "none" : warnings.join("\n"));
    assert.deepEqual(warnings, [], "Redis stayed available: the count was shared throughout");
  } finally {
    agent.destroy();
    await Promise.all(servers.map((s) => killIfRunning(s)));
    await store?.cleanup();
  }
});
