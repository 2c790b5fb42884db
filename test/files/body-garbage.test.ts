import assert from "node:assert/strict";
import { type PerformanceEntry, PerformanceObserver, constants as perf } from "node:perf_hooks";
import { test } from "node:test";
import type { Collect } from "../../src/db/worker-heap-flags.ts";
import { BodyGarbage, threadGc } from "../../src/files/body-garbage.ts";

const CHUNK = 65_536;

test("the young generation is collected once per the bytes given, counted across bodies", () => {
  const calls: Parameters<Collect>[0][] = [];
  const garbage = new BodyGarbage(16 * CHUNK, (options) => calls.push(options));
  for (let chunk = 0; chunk < 15; chunk++) garbage.read(CHUNK);
  assert.deepEqual(calls, []);
  // Another body's chunk completes the count.
  garbage.read(CHUNK);
  assert.deepEqual(calls, [{ type: "minor", execution: "sync" }]);
  for (let chunk = 0; chunk < 40; chunk++) garbage.read(CHUNK);
  assert.equal(calls.length, 3);
  assert.equal(garbage.collections, 3);
});

test("threadGc collects the young generation of this thread when asked", async () => {
  const kinds: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      kinds.push((entry as PerformanceEntry & { detail: { kind: number } }).detail.kind);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  try {
    const collect = threadGc();
    collect({ type: "minor", execution: "sync" });
    // GC entries are delivered once the current task is over.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(kinds.includes(perf.NODE_PERFORMANCE_GC_MINOR), `gc kinds seen: ${kinds}`);
  } finally {
    observer.disconnect();
  }
  assert.equal((globalThis as { gc?: unknown }).gc, undefined, "no global gc is left behind");
});
