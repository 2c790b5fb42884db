import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { access, mkdtemp, rm, stat } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { listAllOrganizations } from "../../src/admin/admin.service.ts";
import { AdminCommandError, type JsonCommand } from "../../src/admin/admin-commands.ts";
import {
  type AdminSocket,
  DataDirInUseError,
  listenAdminSocket,
} from "../../src/admin/admin-socket.ts";
import { sendAdminCommand } from "../../src/admin/admin-socket-client.ts";
import { adminSocketPath } from "../../src/admin/admin-socket-protocol.ts";
import { main } from "../../src/cli.ts";
import { type Database, openDatabase, type Queryable } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";

const root = path.resolve(import.meta.dirname, "../..");
const node = path.join(root, "node_modules/.bin/node");
// Each run gets exactly the store the test means: DATABASE_URL only where a test passes it.
const { DATABASE_URL, ...inheritedEnv } = process.env;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Organization {
  id: string;
  name: string;
  plan: string;
  createdAt: string;
}
interface Key {
  id: string;
  organizationId: string;
  name: string;
  scope: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}
type Env = Record<string, string>;

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "formdeck-cli-"));
  tempDirs.push(dir);
  return dir;
}
after(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

function run(command: string[], args: string[], env: Env) {
  const child = spawn(node, [...command, ...args], {
    cwd: root,
    env: { ...inheritedEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

type Runner = (args: string[], env: Env) => ReturnType<typeof run>;

const formdeck: Runner = (args, env) => run(["bin/formdeck.js"], args, env);

/** main() in this process: the same code as bin/formdeck.js, without a process start each time. */
const inProcess: Runner = async (args, env) => {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
};

async function succeeds<T>(args: string[], env: Env): Promise<T> {
  const result = await formdeck(args, env);
  assert.equal(result.stderr, "");
  assert.equal(result.code, 0);
  return JSON.parse(result.stdout) as T;
}

async function fails(args: string[], env: Env, code: number, message: RegExp, runner = formdeck) {
  const result = await runner(args, env);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /^formdeck: [^\n]+\n$/);
  assert.match(result.stderr, message);
  assert.equal(result.code, code);
}

/** Organizations and keys end to end; only its own rows are checked, as others share PostgreSQL. */
async function adminFlow(env: Env) {
  const name = `cli flow ${randomUUID()}`;
  const acme = await succeeds<Organization>(["org", "create", "--name", name], env);
  assert.match(acme.id, /^org_/);
  assert.match(acme.createdAt, ISO_TIME);
  assert.deepEqual(acme, { id: acme.id, name, plan: "free", createdAt: acme.createdAt });
  const args = ["org", "create", "--name", `  ${name} paid `, "--plan", "paid"];
  const paid = await succeeds<Organization>(args, env);
  assert.deepEqual(paid, {
    id: paid.id,
    name: `${name} paid`,
    plan: "paid",
    createdAt: paid.createdAt,
  });
  const listed = await succeeds<Organization[]>(["org", "list"], env);
  assert.deepEqual(
    listed.filter((org) => org.id === acme.id || org.id === paid.id),
    [acme, paid],
  );
  const upgraded = await succeeds<Organization>(["org", "plan", acme.id, "paid"], env);
  assert.deepEqual(upgraded, { ...acme, plan: "paid" });

  const fullArgs = ["key", "create", "--org", acme.id, "--scope", "full", "--name", "deploy"];
  const { key: fullKey, ...full } = await succeeds<Key & { key: string }>(fullArgs, env);
  assert.match(full.id, /^key_/);
  assert.match(fullKey, /^fdk_[A-Za-z0-9_-]{43}$/);
  assert.match(full.createdAt, ISO_TIME);
  assert.deepEqual(full, {
    id: full.id,
    organizationId: acme.id,
    name: "deploy",
    scope: "full",
    prefix: fullKey.slice(0, 10),
    createdAt: full.createdAt,
    revokedAt: null,
  });
  const readArgs = ["key", "create", "--org", acme.id, "--scope", "read"];
  const { key: readKey, ...read } = await succeeds<Key & { key: string }>(readArgs, env);
  assert.deepEqual(read, {
    id: read.id,
    organizationId: acme.id,
    name: "unnamed",
    scope: "read",
    prefix: readKey.slice(0, 10),
    createdAt: read.createdAt,
    revokedAt: null,
  });
  assert.notEqual(readKey, fullKey);

  const revoked = await succeeds<Key>(["key", "revoke", full.id], env);
  assert.match(revoked.revokedAt ?? "", ISO_TIME);
  assert.deepEqual(revoked, { ...full, revokedAt: revoked.revokedAt });
  const listing = await formdeck(["key", "list", "--org", acme.id], env);
  assert.equal(listing.code, 0);
  assert.deepEqual(JSON.parse(listing.stdout), [revoked, read]);
  assert.ok(!listing.stdout.includes(fullKey) && !listing.stdout.includes(readKey));
  assert.ok(!listing.stdout.includes('"key"'));
  return [upgraded, paid];
}

describe("help", () => {
  const cases = [
    [["--help"], /formdeck org create --name <name>[\s\S]*formdeck key revoke <keyId>/],
    [["-h"], /formdeck key list --org <orgId>/],
    [["org", "--help"], /formdeck org plan <orgId> <free\|paid>/],
    [["key", "-h"], /formdeck key create --org <orgId> --scope <read\|full>/],
    [
      ["org", "create", "--help"],
      /^Usage: formdeck org create --name <name> \[--plan free\|paid\]/,
    ],
    [["key", "create", "--scope", "nope", "-h"], /printed this once/],
    [["key", "revoke", "--bogus", "--help"], /^Usage: formdeck key revoke <keyId>/],
  ] as const;
  for (const [args, usage] of cases) {
    test(`formdeck ${args.join(" ")} prints usage and exits 0`, async () => {
      const result = await inProcess([...args], {});
      assert.deepEqual([result.code, result.stderr], [0, ""]);
      assert.match(result.stdout, usage);
    });
  }
});

describe("bin/formdeck.js", () => {
  test("prints help on stdout and exits 0", async () => {
    const result = await formdeck(["org", "create", "--help"], {});
    assert.deepEqual([result.code, result.stderr], [0, ""]);
    assert.match(result.stdout, /^Usage: formdeck org create --name <name>/);
  });

  test("reports a usage error on one line and exits 2", async () => {
    await fails(["key", "create", "--org"], {}, 2, /^formdeck: --org needs a value/);
  });
});

describe("bad input: one line on stderr and a non-zero exit, before any store opens", () => {
  const cases: [string[], RegExp][] = [
    [[], /missing command/],
    [["forms"], /unknown command "forms"/],
    [["org"], /missing org command/],
    [["org", "delete"], /unknown org command "delete"/],
    [["org", "create"], /missing --name <name>/],
    [["org", "create", "--name"], /--name needs a value/],
    [["org", "create", "--name", "--plan", "paid"], /--name needs a value/],
    [["org", "create", "--name", "a", "--name", "b"], /--name given more than once/],
    [["org", "create", "--name", "a", "--plan", "gold"], /plan: must be one of free, paid/],
    [["org", "create", "--name", "  "], /name: must not be empty/],
    [["org", "create", "--name", "x".repeat(201)], /name: must be at most 200 characters/],
    [["org", "create", "--name", "a\nb"], /name: must not contain control characters/],
    [["org", "create", "--name", "a", "--bogus"], /unknown option --bogus/],
    [["org", "list", "extra"], /unexpected argument "extra"/],
    [["org", "plan", "org_x"], /missing <free\|paid>/],
    [["org", "plan", "org x", "paid"], /organizationId: must be an id/],
    [["key", "create", "--org", "org_x"], /missing --scope <read\|full>/],
    [["key", "create", "--org", "org_x", "--scope", "admin"], /scope: must be one of read, full/],
    [["key", "list"], /missing --org <orgId>/],
    [["key", "revoke"], /missing <keyId>/],
  ];
  for (const [args, message] of cases) {
    test(`formdeck ${JSON.stringify(args).slice(1, 80)} exits 2`, async () => {
      const dataDir = path.join(await tempDir(), "never-created");
      await fails(args, { DATA_DIR: dataDir }, 2, message, inProcess);
      assert.equal(await exists(dataDir), false);
    });
  }

  for (const [env, message] of [
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL: must be one of/],
    [{ DATABASE_URL: "mysql://localhost/x" }, /DATABASE_URL: must be a postgres/],
    [{ PORT: "http" }, /PORT: must be an integer/],
  ] as const) {
    test(`a bad configuration (${Object.keys(env).join()}) exits 1`, async () => {
      await fails(["org", "list"], env, 1, message, inProcess);
    });
  }
});

describe("embedded store with no server running", () => {
  test("the CLI opens DATA_DIR itself, then leaves no socket behind", async () => {
    const dataDir = path.join(await tempDir(), "data");
    const env = { DATA_DIR: dataDir };
    const orgs = await adminFlow(env);
    await fails(["key", "list", "--org", "org_unknown"], env, 1, /org_unknown does not exist/);
    assert.equal(await exists(adminSocketPath(dataDir)), false);
    const db = await openDatabase({ databaseUrl: null, dataDir });
    try {
      assert.deepEqual(await listAllOrganizations(db), orgs);
    } finally {
      await db.close();
    }
  });
});

describe("through a running server's admin socket", () => {
  let dataDir: string;
  let db: Database;
  let socket: AdminSocket;
  let queries = 0;
  const logged: string[] = [];

  before(async () => {
    dataDir = await tempDir();
    db = await openDatabase({ databaseUrl: null, dataDir });
    await migrate(db);
    const counted: Queryable = {
      kind: "pglite",
      query: (sql, params) => {
        queries++;
        return db.query(sql, params);
      },
    };
    const log = { error: (_: object, message: string) => logged.push(message) };
    socket = await listenAdminSocket({ db: counted, socketPath: adminSocketPath(dataDir), log });
  });
  after(async () => {
    await socket.close();
    await db.close();
  });

  test("the socket file can be opened by its owner only", async () => {
    assert.equal((await stat(adminSocketPath(dataDir))).mode & 0o777, 0o600);
  });

  test("commands run on the server's store while it holds DATA_DIR", async () => {
    const orgs = await adminFlow({ DATA_DIR: dataDir });
    assert.ok(queries > 0, "the server ran the queries");
    assert.deepEqual(await listAllOrganizations(db), orgs);
    const name = "n".repeat(200);
    const org = await succeeds<Organization>(["org", "create", "--name", name], {
      DATA_DIR: dataDir,
    });
    assert.equal(org.name, name);
  });

  test("unknown ids exit 1 with the server's one-line message", async () => {
    const env = { DATA_DIR: dataDir };
    await fails(
      ["org", "plan", "org_nope", "paid"],
      env,
      1,
      /organization org_nope does not exist/,
    );
    await fails(["key", "create", "--org", "org_nope", "--scope", "read"], env, 1, /org_nope/);
    await fails(["key", "revoke", "key_nope"], env, 1, /^formdeck: key key_nope does not exist\n$/);
  });

  test("commands arriving as JSON are checked", async () => {
    const socketPath = adminSocketPath(dataDir);
    const malformed = { type: "org.create", name: "x", plan: "free", admin: true };
    await assert.rejects(
      sendAdminCommand(socketPath, malformed as JsonCommand),
      new AdminCommandError("admin: is not accepted by org.create"),
    );
    const response = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const request = http.request({ socketPath, method: "POST", path: "/" }, (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode, body }));
      });
      request.on("error", reject).end("{not json");
    });
    assert.deepEqual(response, {
      status: 400,
      body: JSON.stringify({ error: { code: "bad_request", message: "body: is not valid JSON" } }),
    });
  });

  test("a second listener on the same DATA_DIR is refused", async () => {
    const second = listenAdminSocket({ db, socketPath: adminSocketPath(dataDir), log: console });
    await assert.rejects(second, DataDirInUseError);
    await assert.rejects(second, /another formdeck process is already using this DATA_DIR/);
  });

  test("an unexpected failure is logged and reported without details", async () => {
    const brokenDir = await tempDir();
    const broken: Queryable = {
      kind: "pglite",
      query: () => Promise.reject(new Error("disk on fire")),
    };
    const errors: string[] = [];
    const log = { error: (_: object, message: string) => errors.push(message) };
    const brokenSocket = await listenAdminSocket({
      db: broken,
      socketPath: adminSocketPath(brokenDir),
      log,
    });
    try {
      await fails(
        ["org", "list"],
        { DATA_DIR: brokenDir },
        1,
        /^formdeck: the command failed: see the server log\n$/,
      );
      assert.deepEqual(errors, ["admin command failed"]);
    } finally {
      await brokenSocket.close();
    }
    assert.deepEqual(logged, []);
  });
});

/** A socket file whose process died without closing it, as after a crash (0600, as a server's). */
async function staleSocket(dir: string): Promise<string> {
  const socketPath = adminSocketPath(dir);
  const script = `process.umask(0o177); require("net").createServer().listen(process.argv[1], () => process.kill(process.pid, "SIGKILL"))`;
  await run(["-e", script], [socketPath], {});
  assert.ok((await stat(socketPath)).isSocket());
  return socketPath;
}

describe("a socket file left by a crash", () => {
  test("means no server: sendAdminCommand says so and the CLI opens the store", async () => {
    const dataDir = await tempDir();
    const socketPath = await staleSocket(dataDir);
    assert.deepEqual(await sendAdminCommand(socketPath, { type: "org.list" }), {
      kind: "no-server",
    });
    assert.deepEqual(await succeeds(["org", "list"], { DATA_DIR: dataDir }), []);
    assert.equal(await exists(socketPath), false);
  });

  test("is replaced by listenAdminSocket", async () => {
    const dataDir = await tempDir();
    const socketPath = await staleSocket(dataDir);
    const db = await openDatabase({ databaseUrl: null, dataDir: null });
    await migrate(db);
    const socket = await listenAdminSocket({ db, socketPath, log: console });
    try {
      const org = await succeeds<Organization>(["org", "create", "--name", "after crash"], {
        DATA_DIR: dataDir,
      });
      assert.deepEqual(await listAllOrganizations(db), [org]);
    } finally {
      await socket.close();
      await db.close();
    }
    assert.equal(await exists(socketPath), false, "close() removes the socket file");
  });

  test("does not exist at all: sendAdminCommand says no server", async () => {
    const socketPath = adminSocketPath(path.join(await tempDir(), "missing"));
    assert.deepEqual(await sendAdminCommand(socketPath, { type: "org.list" }), {
      kind: "no-server",
    });
  });
});

describe("PostgreSQL (DATABASE_URL)", { skip: !DATABASE_URL && "DATABASE_URL is not set" }, () => {
  test("the CLI connects to PostgreSQL itself and never touches DATA_DIR", async () => {
    const dataDir = path.join(await tempDir(), "unused");
    const env = { DATABASE_URL: DATABASE_URL as string, DATA_DIR: dataDir };
    await adminFlow(env);
    await fails(["key", "revoke", "key_nope"], env, 1, /key key_nope does not exist/);
    assert.equal(await exists(dataDir), false);
  });
});
