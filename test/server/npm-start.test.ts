import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, test } from "node:test";
import { newcomerEnv, withoutMachineNoise } from "./newcomer.ts";
import { runServerToExit, tempDataDir } from "./server-process.ts";

// Issue 8, item 3: SIGTERM to the `npm start` process ended npm and left the server running,
// still serving, under PID 1. Item 15: every start printed ".env not found".
const root = path.resolve(import.meta.dirname, "../..");

interface NpmStart {
  npm: ChildProcess;
  url: string;
  serverPid: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const started: NpmStart[] = [];
const dirs: string[] = [];
after(async () => {
  for (const { npm, serverPid } of started) {
    for (const pid of [npm.pid, serverPid]) {
      try {
        process.kill(pid as number, "SIGKILL");
      } catch {}
    }
  }
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** `npm start`, as the README says, until the server listens. */
async function npmStart(options: { detached?: boolean } = {}): Promise<NpmStart> {
  const dataDir = await tempDataDir();
  dirs.push(dataDir);
  const npm = spawn("npm", ["start"], {
    cwd: root,
    env: newcomerEnv({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
  });
  let stdout = "";
  let stderr = "";
  npm.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  npm.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => npm.once("exit", resolve));
  const listening = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    npm.stdout.on("data", () => {
      const line = stdout.split("\n").find((l) => l.includes("Server listening at"));
      if (line) {
        const { pid, msg } = JSON.parse(line) as { pid: number; msg: string };
        resolve({ pid, url: (/http:\/\/\S+/.exec(msg) as RegExpExecArray)[0] });
      }
    });
    void exited.then((code) =>
      reject(new Error(`npm start exited (${code}):\n${stdout}${stderr}`)),
    );
  });
  const running = {
    npm,
    url: listening.url,
    serverPid: listening.pid,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
  };
  started.push(running);
  return running;
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether the server is gone: its process, its port, and the log of a graceful drain. */
async function assertStoppedGracefully(started: NpmStart, signal: string) {
  const code = await started.exited;
  assert.equal(
    code,
    0,
    `npm start exits 0 after a graceful stop:\n${started.stdout()}${started.stderr()}`,
  );
  assert.equal(isRunning(started.serverPid), false, "the server process is gone");
  await assert.rejects(fetch(`${started.url}/healthz`), "the port no longer answers");
  const messages = started
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; signal?: string });
  assert.deepEqual(messages.slice(-2), [
    { ...messages.at(-2), msg: "shutting down: finishing requests in flight", signal },
    { ...messages.at(-1), msg: "stopped" },
  ]);
}

test("SIGTERM to the npm start process drains and stops the server", async () => {
  const running = await npmStart();
  assert.notEqual(running.serverPid, running.npm.pid, "npm runs the server as its child");
  assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
  running.npm.kill("SIGTERM");
  await assertStoppedGracefully(running, "SIGTERM");
  // Nothing on stderr: no ".env not found", no warning from npm about engines.
  assert.deepEqual(withoutMachineNoise(running.stderr()), []);
});

test("Ctrl-C in the terminal (SIGINT to npm and the server at once) drains it too", async () => {
  const running = await npmStart({ detached: true });
  // The terminal signals the whole foreground process group, and npm forwards it once more.
  process.kill(-(running.npm.pid as number), "SIGINT");
  await assertStoppedGracefully(running, "SIGINT");
});

test("the server reads .env from where it starts; variables already set win", async () => {
  const cwd = await tempDataDir();
  dirs.push(cwd);
  const dataDir = path.join(cwd, "open-data");
  await mkdir(dataDir, { mode: 0o755 });
  await chmod(dataDir, 0o755);
  await writeFile(path.join(cwd, ".env"), `LOG_LEVEL=loud\nDATA_DIR=${dataDir}\n`);
  const result = await runServerToExit(
    { LOG_LEVEL: "info", DATA_DIR: undefined, DATABASE_URL: undefined },
    cwd,
  );
  // DATA_DIR came from .env (the server refused it), LOG_LEVEL from the environment.
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^formdeck: DATA_DIR \S+\/open-data can be opened by other users/);
});
