import assert from "node:assert/strict";
import { chmod, chown, mkdir, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { after, describe, test } from "node:test";
import { runServerToExit, startServer, tempDataDir } from "./server-process.ts";

// Issue 8, item 1: with umask 022 a server left DATA_DIR 0755 and PGlite's files 0666, readable
// and writable by every local user. The directory is the guard.
const embedded = { skip: !!process.env.DATABASE_URL && "the embedded store only" };
const isRoot = process.getuid?.() === 0;
const modeOf = async (dir: string) => (await stat(dir)).mode & 0o777;

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
async function tempDir() {
  const dir = await tempDataDir();
  dirs.push(dir);
  return dir;
}

describe("DATA_DIR", embedded, () => {
  test("a missing DATA_DIR is created 0700, its missing parents too, whatever the umask", async () => {
    const parent = path.join(await tempDir(), "parent");
    const dataDir = path.join(parent, "data");
    const previousUmask = process.umask(0o022);
    const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: undefined }).finally(() =>
      process.umask(previousUmask),
    );
    try {
      assert.equal(await modeOf(dataDir), 0o700);
      assert.equal(await modeOf(parent), 0o700);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test("a server refuses a DATA_DIR other users can open, in one line saying what to do", async () => {
    for (const mode of [0o755, 0o750, 0o701]) {
      const dataDir = await tempDir();
      await chmod(dataDir, mode);
      const result = await runServerToExit({ DATA_DIR: dataDir, DATABASE_URL: undefined });
      assert.deepEqual(result, {
        code: 1,
        stdout: "",
        stderr: `formdeck: DATA_DIR ${dataDir} can be opened by other users (mode 0${mode.toString(8)}): run "chmod 700 ${dataDir}" and start again\n`,
      });
      assert.deepEqual(await readdir(dataDir), [], "nothing was written in it");
      assert.equal(await modeOf(dataDir), mode, "its mode is the operator's to change");
    }
  });

  test("the command to run is quoted when the path needs it", async () => {
    const dataDir = path.join(await tempDir(), "it's data");
    await mkdir(dataDir, { mode: 0o777 });
    await chmod(dataDir, 0o777);
    const { stderr } = await runServerToExit({ DATA_DIR: dataDir, DATABASE_URL: undefined });
    assert.ok(
      stderr.endsWith(`run "chmod 700 '${path.dirname(dataDir)}/it'\\''s data'" and start again\n`),
    );
  });

  test("a server refuses a DATA_DIR that belongs to another user", {
    skip: !isRoot && "changing a directory's owner needs root",
  }, async () => {
    const dataDir = await tempDir();
    await chown(dataDir, 4321, 4321);
    const result = await runServerToExit({ DATA_DIR: dataDir, DATABASE_URL: undefined });
    assert.deepEqual(result, {
      code: 1,
      stdout: "",
      stderr: `formdeck: DATA_DIR ${dataDir} belongs to another user (uid 4321, this process runs as uid 0): run formdeck as its owner, or use a DATA_DIR of your own\n`,
    });
    assert.deepEqual(await readdir(dataDir), []);
  });
});
