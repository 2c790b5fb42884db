import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { cli, type RunningServer, startServer } from "./server-process.ts";

const shared = !!process.env.DATABASE_URL && !!process.env.REDIS_URL;
const servers: RunningServer[] = [];
let key: string;

before(async () => {
  if (!shared) return;
  const env = { RATE_LIMIT_MAX: "6", RATE_LIMIT_WINDOW_SECONDS: "60" };
  servers.push(await startServer(env), await startServer(env));
  // The CLI works against the same database while both instances run.
  const org = await cli<{ id: string }>(["org", "create", "--name", "Two instances"], {});
  key = (await cli<{ key: string }>(["key", "create", "--org", org.id, "--scope", "full"], {})).key;
});

after(async () => {
  await Promise.all(servers.map((s) => s.stop("SIGTERM")));
});

test("two instances on one PostgreSQL and one Redis serve one organization and one quota", {
  skip: !shared,
}, async () => {
  const [a, b] = servers as [RunningServer, RunningServer];
  // Windows are aligned to the epoch: start well inside one so that it cannot roll over mid-test.
  const leftInWindow = 60_000 - (Date.now() % 60_000);
  if (leftInWindow < 10_000)
    await new Promise((resolve) => setTimeout(resolve, leftInWindow + 100));
  const created = await fetch(`${a.url}/api/v1/forms`, {
    method: "POST",
    headers: { "api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name: "made on A" }),
  });
  assert.equal(created.status, 201);
  const form = (await created.json()) as { id: string };
  const read = await fetch(`${b.url}/api/v1/forms/${form.id}`, { headers: { "api-key": key } });
  assert.equal(read.status, 200);
  assert.deepEqual(await read.json(), form);

  // Two requests spent above; four are left in the window, wherever they land.
  const statuses: number[] = [];
  const remaining: string[] = [];
  for (const server of [a, b, a, b, a, b]) {
    const response = await fetch(`${server.url}/api/v1/forms`, { headers: { "api-key": key } });
    statuses.push(response.status);
    remaining.push(response.headers.get("x-ratelimit-remaining") ?? "");
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  assert.deepEqual(remaining, ["3", "2", "1", "0", "0", "0"]);
});
