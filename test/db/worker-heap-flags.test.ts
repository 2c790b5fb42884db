import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { processSemiSpaceMb } from "../../src/db/worker-heap-flags.ts";

test("the process's semi-space flag is read from NODE_OPTIONS and its own flags, the last counting", () => {
  assert.equal(processSemiSpaceMb([], ""), "0");
  assert.equal(processSemiSpaceMb(["--liftoff-only"], "--enable-source-maps"), "0");
  assert.equal(processSemiSpaceMb(["--max-semi-space-size=8", "--liftoff-only"], ""), "8");
  assert.equal(processSemiSpaceMb([], "--max-semi-space-size=4"), "4");
  assert.equal(processSemiSpaceMb(["--max-semi-space-size=8"], "--max-semi-space-size=4"), "8");
});

test("a worker started with its heap flags keeps its semi-spaces under the process's flag and collects with gc; the process keeps its own", async () => {
  const probe = path.join(import.meta.dirname, "worker-heap-probe.ts");
  // The flag npm start gives: resourceLimits alone would leave the worker at 8 MB semi-spaces.
  const { stdout } = await promisify(execFile)(process.execPath, [
    "--max-semi-space-size=8",
    probe,
  ]);
  // A young generation is two semi-spaces once grown; the worker's gc frees its dead buffers.
  assert.deepEqual(JSON.parse(stdout), {
    workerMb: 2,
    workerBuffersLeftMb: 0,
    mainMb: 16,
    mainGc: "undefined",
    newContextGc: "undefined",
  });
});
