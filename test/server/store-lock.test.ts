import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  cli,
  type RunningServer,
  runCli,
  runServerToExit,
  startServer,
  tempDataDir,
} from "./server-process.ts";

// Issue 8, item 2: the admin socket was the only lock. With it removed, the CLI opened the
// store itself while the server ran (its writes were lost: a revoked key kept working, even
// after a restart) and a second server started on the same DATA_DIR.
const embedded = { skip: !!process.env.DATABASE_URL && "the embedded store only" };

describe("a running server's lock, with its socket file removed", embedded, () => {
  let dataDir: string;
  let env: Record<string, string | undefined>;
  let server: RunningServer;
  let org: { id: string };
  let key: { id: string; key: string; revokedAt: string | null };
  let holds: string;

  before(async () => {
    dataDir = await tempDataDir();
    env = { DATA_DIR: dataDir, DATABASE_URL: undefined };
    server = await startServer(env);
    org = await cli(["org", "create", "--name", "Locked"], env);
    key = await cli(["key", "create", "--org", org.id, "--scope", "full"], env);
    await rm(path.join(dataDir, "formdeck.sock"));
    holds = `a formdeck process (pid ${server.child.pid}) that does not answer on ${dataDir}/formdeck.sock`;
  });

  after(async () => {
    if (server.child.exitCode === null) await server.stop("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  });

  test("the lock file names the server's pid", async () => {
    const [pid] = (await readFile(path.join(dataDir, "formdeck.pid"), "utf8")).split("\n");
    assert.equal(pid, String(server.child.pid));
  });

  test("a second server refuses to start", async () => {
    assert.deepEqual(await runServerToExit(env), {
      code: 1,
      stdout: "",
      stderr: `formdeck: DATA_DIR ${dataDir} is in use by another formdeck process (pid ${server.child.pid}): stop it first, or use another DATA_DIR\n`,
    });
  });

  for (const args of [
    ["key", "revoke", "KEY"],
    ["org", "create", "--name", "Lost"],
    ["key", "create", "--org", "ORG", "--scope", "read"],
    ["org", "list"],
  ]) {
    test(`formdeck ${args.slice(0, 2).join(" ")} fails in one line instead of opening the store`, async () => {
      const filled = args.map((arg) => (arg === "KEY" ? key.id : arg === "ORG" ? org.id : arg));
      assert.deepEqual(await runCli(filled, env), {
        code: 1,
        stdout: "",
        stderr: `formdeck: DATA_DIR ${dataDir} is held by ${holds}: restart that server to run commands through it\n`,
      });
    });
  }

  test("the server kept serving, and its store has nothing the CLI tried to write", async () => {
    const forms = await fetch(`${server.url}/api/v1/forms`, { headers: { "api-key": key.key } });
    assert.equal(forms.status, 200, "the key was not revoked");
    assert.equal(await server.stop("SIGTERM"), 0);
    // Now that no process holds the store, the CLI opens it itself.
    const orgs = await cli<{ id: string }[]>(["org", "list"], env);
    assert.deepEqual(
      orgs.map((listed) => listed.id),
      [org.id],
    );
    const keys = await cli<{ id: string; revokedAt: string | null }[]>(
      ["key", "list", "--org", org.id],
      env,
    );
    assert.deepEqual(
      keys.map(({ id, revokedAt }) => ({ id, revokedAt })),
      [{ id: key.id, revokedAt: null }],
    );
  });
});
