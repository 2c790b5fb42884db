import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { cli, type RunningServer, startServer, tempDataDir } from "./server-process.ts";

let env: Record<string, string>;
let server: RunningServer;
let key: string;

before(async () => {
  env = { DATA_DIR: await tempDataDir() };
  server = await startServer(env);
  const org = await cli<{ id: string }>(["org", "create", "--name", "Process test"], env);
  key = (await cli<{ key: string }>(["key", "create", "--org", org.id, "--scope", "full"], env))
    .key;
});

after(async () => {
  if (server.child.exitCode === null) await server.stop("SIGKILL");
});

const createForm = (url: string, name: string) =>
  fetch(`${url}/api/v1/forms`, {
    method: "POST",
    headers: { "api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name, providerCaptchaSecretKey: "captcha-secret-value" }),
  });

test("health and readiness answer on the real server", async () => {
  assert.deepEqual(await (await fetch(`${server.url}/healthz`)).json(), { status: "ok" });
  assert.deepEqual(await (await fetch(`${server.url}/readyz`)).json(), { status: "ready" });
});

test("a second server on the same DATA_DIR refuses to start", {
  skip: !!process.env.DATABASE_URL,
}, async () => {
  await assert.rejects(startServer(env), /is in use by another formdeck process \(pid \d+\)/);
});

test("SIGTERM lets requests in flight finish, exits 0 and loses no acknowledged write", async () => {
  const initial = (await (
    await fetch(`${server.url}/api/v1/forms`, { headers: { "api-key": key } })
  ).json()) as { meta: { total: number } };
  const inFlight = Array.from({ length: 20 }, (_, i) => createForm(server.url, `in flight ${i}`));
  await new Promise((resolve) => setTimeout(resolve, 20));
  const stoppedAt = Date.now();
  const exitCode = server.stop("SIGTERM");
  const responses = await Promise.allSettled(inFlight);
  assert.equal(await exitCode, 0);
  // A bound on correctness, not speed: the drain must not wait for keep-alive timeouts (72 s).
  assert.ok(Date.now() - stoppedAt < 10_000, "the server stopped within 10 s of SIGTERM");
  const acknowledged = responses.filter((r) => r.status === "fulfilled" && r.value.status === 201);
  assert.ok(acknowledged.length > 0, "some requests were in flight when SIGTERM came");
  for (const r of responses) {
    if (r.status === "fulfilled") assert.equal(r.value.status, 201);
  }

  server = await startServer(env);
  const list = await fetch(`${server.url}/api/v1/forms?pageSize=100`, {
    headers: { "api-key": key },
  });
  const { meta } = (await list.json()) as { meta: { total: number } };
  assert.equal(meta.total, initial.meta.total + acknowledged.length);
});

test("logs are JSON lines with request ids and never contain a key or a secret", async () => {
  const response = await createForm(server.url, "logged");
  assert.equal(response.status, 201);
  await fetch(`${server.url}/api/v1/forms?search=${encodeURIComponent(key)}`, {
    headers: { "api-key": key },
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const lines = server.output.filter((line) => line.trim() !== "");
  const records = lines.map((line) => JSON.parse(line) as { reqId?: string; msg: string });
  assert.ok(records.some((r) => r.reqId === response.headers.get("x-request-id")));
  const text = lines.join("\n");
  assert.ok(!text.includes(key), "the API key appears in the logs");
  assert.ok(!text.includes(key.slice(4, 20)), "part of the API key appears in the logs");
  assert.ok(!text.includes("captcha-secret-value"), "the captcha secret appears in the logs");
});
