import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { acquireStoreLock, StoreLockedError, storeLockPath } from "../../src/admin/store-lock.ts";

const dirs: string[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) child.kill("SIGKILL");
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
async function tempDir() {
  const dir = await mkdtemp(path.join(tmpdir(), "formdeck-lock-"));
  dirs.push(dir);
  return dir;
}

/** A process that lives until the tests end. */
async function liveProcess(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  children.push(child);
  await new Promise((resolve) => child.once("spawn", resolve));
  return child.pid as number;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

const lockedBy = (dataDir: string, pid: number) =>
  new StoreLockedError(dataDir, pid).message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

test("one holder at a time, in this process too; released, it can be taken again", async () => {
  const dataDir = await tempDir();
  const lock = await acquireStoreLock(dataDir);
  const [pid] = (await readFile(storeLockPath(dataDir), "utf8")).split("\n");
  assert.equal(pid, String(process.pid));
  await assert.rejects(acquireStoreLock(dataDir), new RegExp(lockedBy(dataDir, process.pid)));
  await lock.release();
  assert.deepEqual(await readdir(dataDir), [], "the lock file and its drafts are gone");
  await (await acquireStoreLock(dataDir)).release();
});

test("a live process's lock is refused", async () => {
  const dataDir = await tempDir();
  const pid = await liveProcess();
  await writeFile(storeLockPath(dataDir), `${pid}\n`);
  await assert.rejects(acquireStoreLock(dataDir), (error: unknown) => {
    assert.ok(error instanceof StoreLockedError);
    assert.equal(error.holderPid, pid);
    return true;
  });
  assert.equal(await readFile(storeLockPath(dataDir), "utf8"), `${pid}\n`, "left as it was");
});

for (const [name, content] of [
  ["an exited process's lock (a crash) is taken over", async () => `${await deadPid()}\n`],
  ["a lock file that holds no pid is taken over", async () => "not a pid\n"],
  ["pid 0, which would mean a process group, is not a holder", async () => "0\n"],
  [
    "a pid reused by another process (its start time differs) is not the holder",
    async () => `${await liveProcess()}\n1\n`,
  ],
] as const) {
  test(name, { skip: name.includes("reused") && !existsSync("/proc/self/stat") }, async () => {
    const dataDir = await tempDir();
    await writeFile(storeLockPath(dataDir), await content());
    const lock = await acquireStoreLock(dataDir);
    const [pid] = (await readFile(storeLockPath(dataDir), "utf8")).split("\n");
    assert.equal(pid, String(process.pid));
    await lock.release();
    assert.deepEqual(await readdir(dataDir), []);
  });
}

test("a holder's own start time keeps its lock", {
  skip: !existsSync("/proc/self/stat"),
}, async () => {
  const dataDir = await tempDir();
  const pid = await liveProcess();
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  await writeFile(storeLockPath(dataDir), `${pid}\n${startTime}\n`);
  await assert.rejects(acquireStoreLock(dataDir), StoreLockedError);
});

test("release leaves a lock file that is no longer this lock's", async () => {
  const dataDir = await tempDir();
  const lock = await acquireStoreLock(dataDir);
  await writeFile(storeLockPath(dataDir), "12345\n");
  await lock.release();
  assert.equal(await readFile(storeLockPath(dataDir), "utf8"), "12345\n");
});
