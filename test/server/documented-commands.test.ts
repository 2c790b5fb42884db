import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { newcomerEnv, withoutMachineNoise } from "./newcomer.ts";

// Issue 8, item 15: under the system's Node 20, which the README says is enough, `npm install`
// and the first `npx formdeck` printed EBADENGINE warnings. `npm start` is checked in
// npm-start.test.ts.
const root = path.resolve(import.meta.dirname, "../..");

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
async function tempDir() {
  const dir = await mkdtemp(path.join(tmpdir(), "formdeck-newcomer-"));
  dirs.push(dir);
  return dir;
}

function run(command: "npm" | "npx", args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number; stderr: string }>((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, env: newcomerEnv(env), timeout: 120_000 },
      (error, _, stderr) => {
        if (error && typeof error.code !== "number") reject(error);
        else resolve({ code: error ? (error.code as number) : 0, stderr });
      },
    );
  });
}

test("npm install prints no warning", async () => {
  // What a clone holds: the dry run resolves the same tree and checks the same engines as an
  // install, without downloading Node 24 again.
  const clone = await tempDir();
  for (const file of ["package.json", "package-lock.json", ".npmrc"]) {
    await copyFile(path.join(root, file), path.join(clone, file)).catch((error) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
  const result = await run("npm", ["install", "--dry-run", "--prefer-offline"], clone, {});
  assert.deepEqual([result.code, withoutMachineNoise(result.stderr)], [0, []]);
});

test("the first npx formdeck prints no warning", async () => {
  // npx installs the project's own bin into its cache the first time: a fresh cache is a first time.
  const cache = await tempDir();
  const result = await run("npx", ["formdeck", "--help"], root, { npm_config_cache: cache });
  assert.deepEqual([result.code, withoutMachineNoise(result.stderr)], [0, []]);
});
