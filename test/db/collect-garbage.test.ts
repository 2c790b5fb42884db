import assert from "node:assert/strict";
import { test } from "node:test";
import vm from "node:vm";
import { exposedCollector } from "../../src/db/collect-garbage.ts";

const arrayBufferMb = () => process.memoryUsage().arrayBuffers / 1024 / 1024;

test("the exposed collector frees dead buffers in a minor collection, and no other context gets a gc function", async () => {
  const collect = exposedCollector();
  collect({ type: "major", execution: "sync" });
  const before = arrayBufferMb();
  for (let i = 0; i < 20; i++) new Uint8Array(1024 * 1024).fill(i);
  assert.ok(arrayBufferMb() - before >= 19, "20 MB of buffers, not collected yet");
  await new Promise((resolve) => setImmediate(resolve));
  collect({ type: "minor", execution: "sync" });
  // V8 frees the dead buffers' memory on a helper thread right after the collection.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(arrayBufferMb() - before < 2, `${arrayBufferMb() - before} MB left`);
  assert.equal(vm.runInNewContext("typeof gc"), "undefined");
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined");
});
