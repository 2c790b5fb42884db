import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, test } from "node:test";
import { startJobQueue } from "../../src/jobs/queue.ts";
import { TaskSlots } from "../../src/task-slots.ts";
import { closeTestDatabase, testDatabase } from "../helpers.ts";

after(closeTestDatabase);

/** A job queue on the test store with one queue of its own, which no other test works. */
async function newQueue() {
  const db = await testDatabase();
  const name = `test-${randomUUID()}`;
  const queue = await startJobQueue({
    db,
    log: { warn() {}, error() {} },
    databaseUrl: process.env.DATABASE_URL ?? null,
    queues: [name],
  });
  return { db, name, queue };
}

/** The job engine's rows of `name`, with their state. */
async function jobRows(db: Awaited<ReturnType<typeof testDatabase>>, name: string) {
  return db.query<{ state: string; retry_count: number }>(
    "select state, retry_count from pgboss.job where name = $1",
    [name],
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("enqueueAll stores one job; its elements reach the handler in chunks, a bounded number at once", async () => {
  const { db, name, queue } = await newQueue();
  try {
    const seen: number[] = [];
    const chunkSizes: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const all = Promise.withResolvers<void>();
    await db.transaction((tx) =>
      queue.enqueueAll(
        tx,
        name,
        Array.from({ length: 20 }, (_, n) => ({ n })),
      ),
    );
    assert.deepEqual(await jobRows(db, name), [{ state: "created", retry_count: 0 }]);
    // Chunks of 8 / 2 = 4 elements, 2 chunks at once.
    await queue.workInBatches<{ n: number }>(
      name,
      async (chunk) => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        chunkSizes.push(chunk.length);
        await sleep(50);
        seen.push(...chunk.map((data) => data.n));
        running--;
        if (seen.length === 20) all.resolve();
        return chunk.map(() => null);
      },
      { concurrency: 8, fetchers: 2 },
    );
    await all.promise;
    await sleep(500);
    assert.deepEqual(
      seen.toSorted((a, b) => a - b),
      Array.from({ length: 20 }, (_, n) => n),
    );
    assert.deepEqual(chunkSizes, [4, 4, 4, 4, 4]);
    assert.equal(mostAtOnce, 2);
    assert.deepEqual(await jobRows(db, name), [{ state: "completed", retry_count: 0 }]);
  } finally {
    await queue.stop();
  }
});

test("an element that fails fails its job: every element runs again, and the job completes once none fails", async () => {
  const { db, name, queue } = await newQueue();
  try {
    const runs: string[] = [];
    let failures = 1;
    const done = Promise.withResolvers<void>();
    await db.transaction((tx) =>
      queue.enqueueAll(tx, name, [{ item: "a" }, { item: "b" }, { item: "c" }]),
    );
    await queue.workInBatches<{ item: string }>(name, async (chunk) => {
      runs.push(...chunk.map((data) => data.item));
      const outcomes = chunk.map((data) =>
        data.item === "b" && failures-- > 0 ? new Error("b: the store was unreachable") : null,
      );
      if (runs.length === 6) done.resolve();
      return outcomes;
    });
    await done.promise;
    await sleep(500);
    // Chunks of 2 (the default concurrency, one fetcher): a and b, then c; all again after 5 s.
    assert.deepEqual(runs, ["a", "b", "c", "a", "b", "c"]);
    assert.deepEqual(await jobRows(db, name), [{ state: "completed", retry_count: 1 }]);
  } finally {
    await queue.stop();
  }
});

test("enqueueAll stores jobs of up to 100 elements, in one statement; a lone element as a plain job", async () => {
  const { db, name, queue } = await newQueue();
  try {
    await db.transaction((tx) =>
      queue.enqueueAll(
        tx,
        name,
        Array.from({ length: 201 }, (_, n) => ({ n })),
      ),
    );
    const rows = await db.query<{ data: { batchOf?: { n: number }[]; n?: number } }>(
      "select data from pgboss.job where name = $1",
      [name],
    );
    const sizes = rows.map(({ data }) => data.batchOf?.length ?? `plain ${data.n}`);
    assert.deepEqual(sizes.toSorted(), [100, 100, "plain 200"]);
    const elements = rows.flatMap(({ data }) => (data.batchOf ?? [data]).map((item) => item.n));
    assert.deepEqual(
      elements.toSorted((a, b) => Number(a) - Number(b)),
      Array.from({ length: 201 }, (_, n) => n),
    );
  } finally {
    await queue.stop();
  }
});

test("TaskSlots runs at most its size at once, the others in order", async () => {
  const slots = new TaskSlots(2);
  const started: number[] = [];
  let running = 0;
  let mostAtOnce = 0;
  await Promise.all(
    [0, 1, 2, 3, 4].map((n) =>
      slots.run(async () => {
        started.push(n);
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        await sleep(20);
        running--;
      }),
    ),
  );
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  assert.equal(mostAtOnce, 2);
});
