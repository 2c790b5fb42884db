import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { test } from "node:test";
import { spareCapacity } from "../../src/jobs/spare-capacity.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long `wait()` took, in ms. */
async function timed(wait: () => Promise<void>) {
  const started = performance.now();
  await wait();
  return performance.now() - started;
}

test("background work waits while requests pile up in flight, until they ease or for 1 s at most", async () => {
  const capacity = spareCapacity();
  try {
    assert.ok((await timed(capacity.wait)) < 50, "idle: no wait");
    assert.equal(capacity.saturated, false);
    const responses = Array.from({ length: 16 }, () => new EventEmitter());
    for (const response of responses) capacity.track(response);
    await sleep(250);
    assert.equal(capacity.saturated, true);
    // Saturated throughout: the wait ends at its bound.
    const bounded = await timed(capacity.wait);
    assert.ok(bounded >= 900 && bounded < 1_600, `bounded wait took ${bounded} ms`);
    // Eased during the wait: it ends at the next sample.
    const easing = timed(capacity.wait);
    await sleep(150);
    for (const response of responses) response.emit("close");
    const eased = await easing;
    assert.ok(eased >= 100 && eased < 600, `eased wait took ${eased} ms`);
    assert.equal(capacity.saturated, false);
    // 15 in flight are not saturation.
    for (const response of responses.slice(1)) capacity.track(response);
    await sleep(250);
    assert.ok((await timed(capacity.wait)) < 50, "15 in flight: no wait");
  } finally {
    capacity.stop();
  }
});
