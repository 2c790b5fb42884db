// A process that takes a job and never finishes it, for a test to kill with SIGKILL: the job is
// then left active by a dead process. argv: queue name; DATA_DIR or DATABASE_URL names the store.
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { startJobQueue } from "../../src/jobs/queue.ts";

const queueName = process.argv[2] as string;
const databaseUrl = process.env.DATABASE_URL ?? null;
const db = await openDatabase({ databaseUrl, dataDir: process.env.DATA_DIR ?? null });
await migrate(db);
const queue = await startJobQueue({
  db,
  log: { warn() {}, error() {} },
  databaseUrl,
  queues: [queueName],
});
await db.transaction((tx) => queue.enqueue(tx, queueName, { n: 1 }));
await queue.work(queueName, async () => {
  process.stdout.write("taken\n");
  await new Promise(() => {});
});
// Keeps the process alive until it is killed.
setInterval(() => {}, 1_000);
