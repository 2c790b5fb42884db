import assert from "node:assert/strict";
import { chmod, chown, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { sendAdminCommand } from "../../src/admin/admin-socket-client.ts";
import { adminSocketPath } from "../../src/admin/admin-socket-protocol.ts";
import { main } from "../../src/cli.ts";

// Issue 8, items 1 and 2, as the CLI sees them: it opens the embedded store itself when no
// server runs, so it applies the server's rule for DATA_DIR; and it trusts a socket's answers
// only when the socket is this user's own.
const isRoot = process.getuid?.() === 0;

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
async function tempDir() {
  const dir = await mkdtemp(path.join(tmpdir(), "formdeck-cli-"));
  dirs.push(dir);
  return dir;
}

async function formdeck(args: string[], env: Record<string, string>) {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

describe("DATA_DIR, when the CLI opens the store itself", () => {
  test("a missing DATA_DIR is created 0700, whatever the umask", async () => {
    const dataDir = path.join(await tempDir(), "data");
    const previousUmask = process.umask(0o022);
    try {
      assert.deepEqual(await formdeck(["org", "list"], { DATA_DIR: dataDir }), {
        code: 0,
        stdout: "[]\n",
        stderr: "",
      });
    } finally {
      process.umask(previousUmask);
    }
    assert.equal((await stat(dataDir)).mode & 0o777, 0o700);
  });

  test("a DATA_DIR other users can open is refused, and nothing is written in it", async () => {
    const dataDir = await tempDir();
    await chmod(dataDir, 0o755);
    assert.deepEqual(await formdeck(["org", "create", "--name", "x"], { DATA_DIR: dataDir }), {
      code: 1,
      stdout: "",
      stderr: `formdeck: DATA_DIR ${dataDir} can be opened by other users (mode 0755): run "chmod 700 ${dataDir}" and start again\n`,
    });
    assert.deepEqual(await readdir(dataDir), []);
  });

  test("a DATA_DIR that is a file, or under one, is refused in one line", async () => {
    const file = path.join(await tempDir(), "file");
    await writeFile(file, "");
    for (const dataDir of [file, path.join(file, "data")]) {
      assert.deepEqual(await formdeck(["org", "list"], { DATA_DIR: dataDir }), {
        code: 1,
        stdout: "",
        stderr: `formdeck: DATA_DIR ${dataDir} is not a directory: point DATA_DIR at one\n`,
      });
    }
  });

  test("a DATA_DIR of another user is refused", {
    skip: !isRoot && "changing a directory's owner needs root",
  }, async () => {
    const dataDir = await tempDir();
    await chown(dataDir, 4321, 4321);
    const result = await formdeck(["org", "list"], { DATA_DIR: dataDir });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^formdeck: DATA_DIR \S+ belongs to another user \(uid 4321,/);
    assert.deepEqual(await readdir(dataDir), []);
  });
});

/** A listening socket at `socketPath` that answers any request, as an impostor would. */
async function impostor(socketPath: string, mode: number): Promise<net.Server> {
  const server = net.createServer((socket) => {
    socket.end("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]");
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  await chmod(socketPath, mode);
  return server;
}

describe("an admin socket that is not this user's own", () => {
  const refusal = (socketPath: string, found: string) =>
    `formdeck: ${socketPath} is not this user's own admin socket (${found}): refusing to send it commands; remove it if no formdeck server runs on this DATA_DIR\n`;

  test("one other users may connect to is not sent commands", async () => {
    const dataDir = await tempDir();
    const socketPath = adminSocketPath(dataDir);
    const server = await impostor(socketPath, 0o666);
    try {
      assert.deepEqual(await formdeck(["org", "list"], { DATA_DIR: dataDir }), {
        code: 1,
        stdout: "",
        stderr: refusal(socketPath, `a socket of uid ${process.getuid?.()} with mode 0666`),
      });
    } finally {
      server.close();
    }
  });

  test("one that belongs to another user is not sent commands", {
    skip: !isRoot && "changing a socket's owner needs root",
  }, async () => {
    const dataDir = await tempDir();
    const socketPath = adminSocketPath(dataDir);
    const server = await impostor(socketPath, 0o600);
    await chown(socketPath, 4321, 4321);
    try {
      assert.deepEqual(await formdeck(["key", "revoke", "key_x"], { DATA_DIR: dataDir }), {
        code: 1,
        stdout: "",
        stderr: refusal(socketPath, "a socket of uid 4321 with mode 0600"),
      });
    } finally {
      server.close();
    }
  });

  test("a file that is not a socket is not connected to", async () => {
    const dataDir = await tempDir();
    const socketPath = adminSocketPath(dataDir);
    await writeFile(socketPath, "", { mode: 0o600 });
    await assert.rejects(sendAdminCommand(socketPath, { type: "org.list" }), {
      message: refusal(socketPath, "not a socket").slice("formdeck: ".length, -1),
    });
  });

  test("this user's socket with mode 0600 is trusted", async () => {
    const dataDir = await tempDir();
    const socketPath = adminSocketPath(dataDir);
    const server = await impostor(socketPath, 0o600);
    try {
      assert.deepEqual(await sendAdminCommand(socketPath, { type: "org.list" }), {
        kind: "result",
        result: [],
      });
    } finally {
      server.close();
    }
  });
});
