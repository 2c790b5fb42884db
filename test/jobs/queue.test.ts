import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { after, test } from "node:test";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { startJobQueue } from "../../src/jobs/queue.ts";
import { closeTestDatabase, testDatabase } from "../helpers.ts";
import { tempDataDir } from "../server/server-process.ts";

const silentLog = { warn() {}, error() {} };

after(closeTestDatabase);

/** A queue of its own, so that no other test's worker takes its jobs. */
const queueName = () => `test-${randomUUID()}`;

/** A job queue on the test store with one queue of its own. */
async function newQueue() {
  const db = await testDatabase();
  const name = queueName();
  const queue = await startJobQueue({
    db,
    log: silentLog,
    databaseUrl: process.env.DATABASE_URL ?? null,
    queues: [name],
  });
  return { db, name, queue };
}

test("a job enqueued in a transaction that rolls back never exists; one committed runs once", async () => {
  const { db, name, queue } = await newQueue();
  try {
    const ran: string[] = [];
    const done = Promise.withResolvers<void>();
    await assert.rejects(
      db.transaction(async (tx) => {
        await queue.enqueue(tx, name, { n: "rolled back" });
        throw new Error("the submission failed");
      }),
      /the submission failed/,
    );
    await db.transaction((tx) => queue.enqueue(tx, name, { n: "committed" }));
    await queue.work<{ n: string }>(name, async (data) => {
      ran.push(data.n);
      done.resolve();
    });
    await done.promise;
    // Time for a second run, were there one to come.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.deepEqual(ran, ["committed"]);
  } finally {
    await queue.stop();
  }
});

test("a job whose startAfter lies ahead waits for it", async () => {
  const { db, name, queue } = await newQueue();
  try {
    const enqueuedAt = Date.now();
    const ranAt = Promise.withResolvers<number>();
    await db.transaction((tx) =>
      queue.enqueue(tx, name, {}, { startAfter: new Date(enqueuedAt + 3_000) }),
    );
    await queue.work(name, async () => ranAt.resolve(Date.now()));
    const delay = (await ranAt.promise) - enqueuedAt;
    assert.ok(delay >= 2_900 && delay < 10_000, `ran ${delay} ms after being enqueued`);
  } finally {
    await queue.stop();
  }
});

test("stop waits for the jobs running: a handler in progress finishes", async () => {
  const { db, name, queue } = await newQueue();
  const started = Promise.withResolvers<void>();
  let finished = false;
  await queue.work(name, async () => {
    started.resolve();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    finished = true;
  });
  await db.transaction((tx) => queue.enqueue(tx, name, {}));
  await started.promise;
  await queue.stop(5_000);
  assert.equal(finished, true);
});

test("a job left active by a killed process runs again after a restart, within 60 s", async () => {
  const name = queueName();
  const dataDir = process.env.DATABASE_URL ? null : await tempDataDir();
  try {
    const child = spawn(process.execPath, ["test/jobs/take-job-and-hang.ts", name], {
      env: { ...process.env, ...(dataDir ? { DATA_DIR: dataDir } : {}) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = once(child, "exit");
    let output = "";
    for await (const chunk of child.stdout) {
      output += String(chunk);
      if (output.includes("taken")) break;
    }
    assert.equal(output, "taken\n");
    child.kill("SIGKILL");
    await exited;
    const killedAt = Date.now();
    // The restart: the same store, opened again.
    const db = dataDir ? await openDatabase({ databaseUrl: null, dataDir }) : await testDatabase();
    if (dataDir) await migrate(db);
    const queue = await startJobQueue({
      db,
      log: silentLog,
      databaseUrl: process.env.DATABASE_URL ?? null,
      queues: [name],
    });
    try {
      const ranAgain = Promise.withResolvers<number>();
      await queue.work<{ n: number }>(name, async (data) => {
        assert.deepEqual(data, { n: 1 });
        ranAgain.resolve(Date.now());
      });
      const after = (await ranAgain.promise) - killedAt;
      assert.ok(after < 60_000, `ran again ${after} ms after the kill`);
    } finally {
      await queue.stop();
      if (dataDir) await db.close();
    }
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
});

test("two instances on one store: every job runs once, on one of them", async () => {
  const db = await testDatabase();
  const name = queueName();
  const options = {
    db,
    log: silentLog,
    databaseUrl: process.env.DATABASE_URL ?? null,
    queues: [name],
  };
  const instances = [await startJobQueue(options), await startJobQueue(options)];
  try {
    const runs = new Map<number, string[]>();
    const all = Promise.withResolvers<void>();
    const jobs = 40;
    for (const [index, queue] of instances.entries()) {
      await queue.work<{ n: number }>(name, async ({ n }) => {
        runs.set(n, [...(runs.get(n) ?? []), `instance ${index}`]);
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (runs.size === jobs) all.resolve();
      });
    }
    await db.transaction(async (tx) => {
      for (let n = 0; n < jobs; n++) await instances[n % 2]?.enqueue(tx, name, { n });
    });
    await all.promise;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(runs.size, jobs);
    for (const [n, ran] of runs) assert.equal(ran.length, 1, `job ${n} ran on ${ran.join(", ")}`);
  } finally {
    await Promise.all(instances.map((queue) => queue.stop()));
  }
});
