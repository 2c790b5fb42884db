import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { StatementBatches } from "../../src/db/statement-batches.ts";

/** A statement that doubles its items and records each batch it was given. */
function recordingBatches(options: { maxItems: number; keyOf?: (item: number) => string }) {
  const batches: number[][] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const releases: (() => void)[] = [];
  let holding = false;
  const batcher = new StatementBatches(async (items: number[]) => {
    batches.push(items);
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    if (holding) await new Promise<void>((resolve) => releases.push(resolve));
    else await nextTurn();
    inFlight--;
    return items.map((item) => item * 2);
  }, options);
  return {
    batcher,
    batches,
    mostInFlight: () => mostInFlight,
    hold: () => {
      holding = true;
    },
    releaseAll: () => {
      holding = false;
      for (const release of releases.splice(0)) release();
    },
  };
}

/** An error as the store gives it: a SQLSTATE in `code`. */
const storeError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("statement batches", () => {
  test("calls of one turn go as one statement, each answered with its own result", async () => {
    const { batcher, batches } = recordingBatches({ maxItems: 100 });
    const results = await Promise.all([1, 2, 3].map((item) => batcher.submit(item)));
    assert.deepEqual(results, [2, 4, 6]);
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  test("calls that arrive while a statement runs wait, and go together in the next", async () => {
    const recording = recordingBatches({ maxItems: 100 });
    const { batcher, batches } = recording;
    recording.hold();
    const first = batcher.submit(1);
    await nextTurn();
    await nextTurn();
    const later = [2, 3, 4].map((item) => batcher.submit(item));
    await nextTurn();
    await nextTurn();
    assert.deepEqual(batches, [[1]], "nothing else starts while the first runs");
    recording.releaseAll();
    assert.equal(await first, 2);
    await nextTurn();
    await nextTurn();
    recording.releaseAll();
    assert.deepEqual(await Promise.all(later), [4, 6, 8]);
    assert.deepEqual(batches, [[1], [2, 3, 4]]);
    assert.equal(recording.mostInFlight(), 1);
  });

  test("a statement takes at most maxItems, the oldest first", async () => {
    const { batcher, batches } = recordingBatches({ maxItems: 2 });
    const results = await Promise.all([1, 2, 3, 4, 5].map((item) => batcher.submit(item)));
    assert.deepEqual(results, [2, 4, 6, 8, 10]);
    assert.deepEqual(batches, [[1, 2], [3, 4], [5]]);
  });

  test("items of one key never share a statement: a second one goes at once on its own", async () => {
    const recording = recordingBatches({ maxItems: 100, keyOf: (item) => String(item % 10) });
    const { batcher, batches } = recording;
    recording.hold();
    const results = [1, 11, 2, 21, 12].map((item) => batcher.submit(item));
    await nextTurn();
    await nextTurn();
    // Beside the batch, not after it: the batch is still running.
    assert.deepEqual(batches.map((batch) => batch.join()).sort(), ["1,2", "11", "12", "21"]);
    assert.equal(recording.mostInFlight(), 4);
    // A key the batch in flight holds goes at once too; another key waits for the next batch.
    const sameKey = batcher.submit(31);
    const otherKey = batcher.submit(3);
    await nextTurn();
    await nextTurn();
    assert.deepEqual(batches.slice(4), [[31]]);
    recording.releaseAll();
    assert.deepEqual(await Promise.all(results), [2, 22, 4, 42, 24]);
    assert.equal(await sameKey, 62);
    await nextTurn();
    await nextTurn();
    recording.releaseAll();
    assert.equal(await otherKey, 6);
    assert.deepEqual(batches.slice(5), [[3]]);
  });

  test("a statement the store refuses runs again item by item: only the faulty item fails", async () => {
    const batches: number[][] = [];
    const batcher = new StatementBatches(
      async (items: number[]) => {
        batches.push(items);
        if (items.includes(13)) throw storeError("23514", "check violated by 13");
        return items.map((item) => item * 2);
      },
      { maxItems: 100 },
    );
    const outcomes = await Promise.allSettled([12, 13, 14].map((item) => batcher.submit(item)));
    assert.deepEqual(
      outcomes.map((outcome) =>
        outcome.status === "fulfilled" ? outcome.value : (outcome.reason as Error).message,
      ),
      [24, "check violated by 13", 28],
    );
    assert.deepEqual(batches, [[12, 13, 14], [12], [13], [14]]);
  });

  test("an unreachable store fails every item at once, none run again", async () => {
    for (const error of [
      storeError("08006", "connection failure"),
      new Error("Connection terminated unexpectedly"),
    ]) {
      const batches: number[][] = [];
      const batcher = new StatementBatches(
        async (items: number[]) => {
          batches.push(items);
          throw error;
        },
        { maxItems: 100 },
      );
      const outcomes = await Promise.allSettled([1, 2].map((item) => batcher.submit(item)));
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status === "rejected" && outcome.reason),
        [error, error],
      );
      assert.deepEqual(batches, [[1, 2]], "a statement that may have committed is not repeated");
    }
  });

  test("after a failure, the calls waiting meanwhile still go", async () => {
    let calls = 0;
    const batcher = new StatementBatches(
      async (items: number[]) => {
        calls++;
        await nextTurn();
        if (calls === 1) throw storeError("08006", "connection failure");
        return items;
      },
      { maxItems: 100 },
    );
    const failed = assert.rejects(batcher.submit(1), /connection failure/);
    await nextTurn();
    await nextTurn();
    const waiting = batcher.submit(2);
    await failed;
    assert.equal(await waiting, 2);
  });
});
