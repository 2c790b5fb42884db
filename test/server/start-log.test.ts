import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import net from "node:net";
import { test } from "node:test";
import { startServer, tempDataDir } from "./server-process.ts";

const PASSWORD = "start-log-password-7f3a";

/** A port nothing listens on: connections to it are refused at once. */
async function refusedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.href;
}

/** The start line, and the whole output, which must name no password. */
function startLine(output: string[], passwords: string[]) {
  const text = output.join("\n");
  for (const password of passwords) {
    assert.ok(!text.includes(password), `a password appears in the log:\n${text}`);
  }
  const records = output.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  const line = records.find((record) => record.msg.startsWith("store: "));
  assert.ok(line, `no start line in:\n${text}`);
  return { store: line.store, rateLimiter: line.rateLimiter, msg: line.msg };
}

test("the start log names the embedded store's DATA_DIR and Redis, never Redis's password", async () => {
  const dataDir = await tempDataDir();
  const port = await refusedPort();
  const server = await startServer({
    DATABASE_URL: undefined,
    DATA_DIR: dataDir,
    REDIS_URL: `redis://formdeck:${PASSWORD}@127.0.0.1:${port}/0`,
  });
  try {
    // A request goes through the limiter, whose Redis errors are logged too.
    await fetch(`${server.url}/api/v1/forms`, { headers: { "api-key": "fdk_none" } });
  } finally {
    assert.equal(await server.stop("SIGTERM"), 0);
    await rm(dataDir, { recursive: true, force: true });
  }
  assert.deepEqual(startLine(server.output, [PASSWORD]), {
    store: { type: "embedded", dataDir },
    rateLimiter: { type: "redis", host: "127.0.0.1", port },
    msg: `store: embedded PGlite in ${dataDir}; rate limits: Redis at 127.0.0.1:${port}`,
  });
});

test("the start log names PostgreSQL's host, port and database, even when it cannot be reached", async () => {
  const port = await refusedPort();
  const error = await startServer({
    DATABASE_URL: `postgres://formdeck:${PASSWORD}@127.0.0.1:${port}/formdeck_start_log`,
    REDIS_URL: undefined,
  }).then(
    () => assert.fail("the server started without its database"),
    (failure: Error) => failure,
  );
  const output = error.message.split("\n").slice(1);
  assert.match(error.message, /^server exited \(1\) before listening/);
  assert.deepEqual(startLine(output, [PASSWORD]), {
    store: { type: "postgresql", host: "127.0.0.1", port, database: "formdeck_start_log" },
    rateLimiter: { type: "in-process" },
    msg: `store: PostgreSQL at 127.0.0.1:${port}, database formdeck_start_log; rate limits: in-process`,
  });
});

const { DATABASE_URL, REDIS_URL } = process.env;

test("on a running PostgreSQL and Redis, the start log names both and no password", {
  skip: !(DATABASE_URL && REDIS_URL) && "DATABASE_URL and REDIS_URL are not both set",
}, async () => {
  const database = new URL(DATABASE_URL as string);
  const redis = new URL(REDIS_URL as string);
  // Passwords they already carry are the ones to hide; otherwise ones they do not check.
  const databasePassword = database.password || `pg-${PASSWORD}`;
  const redisPassword = redis.password || `redis-${PASSWORD}`;
  const server = await startServer({
    DATABASE_URL: withPassword(database.href, databasePassword),
    REDIS_URL: withPassword(redis.href, redisPassword),
  });
  try {
    await fetch(`${server.url}/api/v1/forms`, { headers: { "api-key": "fdk_none" } });
  } finally {
    assert.equal(await server.stop("SIGTERM"), 0);
  }
  const { store, rateLimiter } = startLine(server.output, [databasePassword, redisPassword]);
  assert.deepEqual(
    { store, rateLimiter },
    {
      store: {
        type: "postgresql",
        host: database.hostname,
        port: Number(database.port || 5432),
        database: decodeURIComponent(database.pathname.slice(1)),
      },
      rateLimiter: { type: "redis", host: redis.hostname, port: Number(redis.port || 6379) },
    },
  );
});

test("a REDIS_URL that does not parse stops the start without showing its password", async () => {
  const dataDir = await tempDataDir();
  const error = await startServer({
    DATA_DIR: dataDir,
    REDIS_URL: `redis://formdeck:${PASSWORD}@[not-an-address]:6379`,
  }).then(
    () => assert.fail("the server started with a REDIS_URL that does not parse"),
    (failure: Error) => failure,
  );
  await rm(dataDir, { recursive: true, force: true });
  const output = error.message.split("\n").slice(1);
  assert.match(error.message, /^server exited \(1\) before listening/);
  assert.deepEqual(startLine(output, [PASSWORD]).rateLimiter, { type: "redis" });
  // Not necessarily the last line: the store's own lines may still be on their way out.
  assert.ok(
    output.some((line) => /"msg":"formdeck could not start"/.test(line)),
    output.join("\n"),
  );
});
