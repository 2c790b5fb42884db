import type { FastifyBaseLogger } from "fastify";
import { type Db, type Job, type JobResult, PgBoss } from "pg-boss";
import type { Database, Queryable } from "../db/database.ts";
import { alwaysSpare, type SpareCapacity } from "./spare-capacity.ts";

/**
 * How long a job may go without its worker's heartbeat before it counts as interrupted (a
 * crashed or killed process): it then runs again. The supervisor's pass every SUPERVISE_SECONDS
 * looks at each queue's heartbeats at most every SUPERVISE_SECONDS too (pg-boss's monitor
 * interval, 60 s unless set, which made a kill -9 take 55 to 71 s to recover), so interrupted
 * work runs again within 10 + 15 s, its retry's 5 s and a poll: under the 60 s that
 * notifications.md allows.
 */
const HEARTBEAT_SECONDS = 10;
const SUPERVISE_SECONDS = 15;

/**
 * Jobs that fail unexpectedly (a handler that throws: a store unreachable, a bug) or are
 * interrupted run again this many times, 5 s apart and then longer. Deliveries keep their own
 * schedule (retry-schedule.ts): a failed delivery is a job that completes after enqueuing the
 * next attempt, not a job that fails.
 */
const JOB_RETRY_LIMIT = 10;

/** How often a worker looks for jobs that came due (a retry's startAfter) rather than new ones. */
const POLL_SECONDS = 2;

/** What a handler is given: the data the job was enqueued with. */
export type JobHandler<Data> = (data: Data) => Promise<void>;

/**
 * What a batch handler is given: the data of the jobs fetched together, so that it can read and
 * record them in a few statements rather than a few per job. It answers, per job and in order,
 * null when the job is done, or the error that fails it (run again later). A handler that throws
 * fails every job of the batch.
 */
export type BatchHandler<Data> = (batch: readonly Data[]) => Promise<(Error | null)[]>;

export interface EnqueueOptions {
  /** Not before this instant. */
  startAfter?: Date;
}

export interface WorkOptions {
  /** Jobs run at once on this instance (default 2). */
  concurrency?: number;
  /**
   * Statements fetching jobs at once (default 1), each for its share of `concurrency`: a slot
   * is taken again once the jobs fetched with it are all done, so a slow job holds back the
   * others of its fetch.
   */
  fetchers?: number;
}

/** What a handler threw, as an Error (a job's failure output is its message). */
export const asError = (error: unknown) =>
  error instanceof Error ? error : new Error(String(error));

/** Each job run by `handler` on its own: an error is that job's failure only. */
const oneByOne =
  <Data>(handler: JobHandler<Data>): BatchHandler<Data> =>
  (batch) =>
    Promise.all(batch.map((data) => handler(data).then(() => null, asError)));

/** The batch's runs: each job completed, or failed (retried later) with its error. */
async function runBatch<Data>(
  jobs: Job<Data>[],
  handler: BatchHandler<Data>,
): Promise<JobResult[]> {
  const outcomes = await handler(jobs.map((job) => job.data)).catch((error: unknown) =>
    jobs.map(() => asError(error)),
  );
  return jobs.map((job, i) => {
    const error = outcomes[i] ?? null;
    return error
      ? { id: job.id, status: "failed", output: { message: error.message } }
      : { id: job.id, status: "completed" };
  });
}

export interface JobQueue {
  /**
   * Adds a job to `queue` in `tx`, a transaction of ours: it exists once that transaction
   * commits, and never if it rolls back.
   */
  enqueue(tx: Queryable, queue: string, data: object, options?: EnqueueOptions): Promise<void>;
  /** Adds a job per element of `batch`, to run at once, in one statement in `tx` (as `enqueue`). */
  enqueueAll(tx: Queryable, queue: string, batch: readonly object[]): Promise<void>;
  /** Runs `handler` for the jobs of `queue` on this instance, `concurrency` at a time. */
  work<Data>(queue: string, handler: JobHandler<Data>, options?: WorkOptions): Promise<void>;
  /** Runs `handler` for the jobs of `queue`, a fetch's batch at a time (WorkOptions.fetchers). */
  workInBatches<Data>(
    queue: string,
    handler: BatchHandler<Data>,
    options?: WorkOptions,
  ): Promise<void>;
  /** Stops taking jobs and waits for those running, for at most `drainMs`. */
  stop(drainMs?: number): Promise<void>;
}

export interface JobQueueOptions {
  db: Database;
  log: Pick<FastifyBaseLogger, "warn" | "error">;
  /** PostgreSQL: the job engine has a small pool of its own. Null: the embedded store. */
  databaseUrl: string | null;
  /** Every queue this instance enqueues to or works: created if missing. */
  queues: readonly string[];
  /** What each fetched batch waits for before it runs: requests come first (never, unless set). */
  capacity?: SpareCapacity;
}

/** Our transaction as the job engine's connection: its statements are single, with parameters. */
const inTransaction = (tx: Queryable): Db => ({
  executeSql: async (text, values) => ({ rows: await tx.query(text, values ?? []) }),
});

/**
 * The embedded store as the job engine's connection. Its schema install and maintenance are
 * scripts of several statements without parameters: those run as scripts. Its statements are
 * not bounded by the request timeout (maintenance may scan the job table), and its
 * notifications come through our listener, so that a job enqueued wakes a worker at once.
 */
function embeddedConnection(db: Database): Db {
  return {
    async executeSql(text, values) {
      const rows = values?.length
        ? await db.query(text, values, { unbounded: true })
        : await db.query(text, [], { script: true, unbounded: true });
      return { rows };
    },
    async listen(channel, onNotification, onReconnect) {
      const stop = db.listen(channel, {
        message: onNotification,
        connected: onReconnect,
        disconnected() {},
      });
      return { close: stop };
    },
  };
}

/**
 * The job engine (pg-boss), on PostgreSQL or the embedded store alike: shared by every instance
 * on one database, each job on one instance at a time, kept across restarts.
 */
export async function startJobQueue(options: JobQueueOptions): Promise<JobQueue> {
  const { db, log, databaseUrl, queues, capacity = alwaysSpare } = options;
  const boss = new PgBoss({
    ...(databaseUrl
      ? { connectionString: databaseUrl, max: 4, application_name: "formdeck-jobs" }
      : { db: embeddedConnection(db), backend: "pglite" as const }),
    useListenNotify: true,
    superviseIntervalSeconds: SUPERVISE_SECONDS,
    monitorIntervalSeconds: SUPERVISE_SECONDS,
    // Not one of formdeck's concerns: the registry of instances and persisted statistics.
    registerInstance: false,
    persistWarnings: false,
  });
  boss.on("error", (error) => log.error({ err: error }, "job queue: error"));
  await boss.start();
  for (const name of queues) {
    await boss.createQueue(name, {
      heartbeatSeconds: HEARTBEAT_SECONDS,
      retryLimit: JOB_RETRY_LIMIT,
      retryDelay: 5,
      retryBackoff: true,
      retryDelayMax: 3_600,
      // A completed job's data (which may hold personal data) goes soon.
      deleteAfterSeconds: 3_600,
      notify: true,
    });
  }
  const created = new Set(queues);
  // pg-boss looks an unknown queue up on its own connection: on the embedded store's single
  // connection, held by the caller's transaction, that would wait for ever.
  const mustExist = (queue: string) => {
    if (!created.has(queue)) throw new Error(`job queue: ${queue} was not created at start`);
  };
  const workInBatches = async <Data>(
    queue: string,
    handler: BatchHandler<Data>,
    workOptions: WorkOptions = {},
  ) => {
    const { concurrency = 2, fetchers = 1 } = workOptions;
    // Each fetcher takes up to its share of the slots in one statement and runs those jobs at
    // once, each completed or failed on its own. Few fetchers, not one per slot: a job
    // enqueued wakes every fetcher of its queue (NOTIFY), and each wake-up is a statement.
    // A fetcher that got jobs fetches again as soon as they are done (notifyWorker) instead of
    // waiting for its next poll: a backlog goes at the workers' pace, not a batch per poll.
    const batchSize = Math.ceil(concurrency / fetchers);
    for (let fetcher = 0; fetcher < fetchers; fetcher++) {
      let workerId: string | null = null;
      workerId = await boss.work<Data>(
        queue,
        {
          localConcurrency: 1,
          batchSize,
          perJobResults: true,
          // A job enqueued wakes the fetchers at once (NOTIFY); one due later (a retry) is
          // found by this poll.
          pollingIntervalSeconds: POLL_SECONDS,
          notifyPollingIntervalSeconds: POLL_SECONDS,
        },
        async (jobs) => {
          // Requests first: on a saturated instance a batch waits (src/jobs/spare-capacity.ts).
          await capacity.wait();
          const results = await runBatch(jobs, handler);
          if (jobs.length > 0 && workerId) boss.notifyWorker(workerId);
          return results;
        },
      );
    }
  };
  return {
    async enqueue(tx, queue, data, enqueueOptions = {}) {
      mustExist(queue);
      await boss.send(queue, data, {
        db: inTransaction(tx),
        ...(enqueueOptions.startAfter ? { startAfter: enqueueOptions.startAfter } : {}),
      });
    },
    async enqueueAll(tx, queue, batch) {
      mustExist(queue);
      if (batch.length === 0) return;
      // One INSERT (and at most one NOTIFY) for the batch, with the queue's options as send's.
      await boss.insert(
        queue,
        batch.map((data) => ({ data })),
        { db: inTransaction(tx) },
      );
    },
    work: (queue, handler, workOptions) => workInBatches(queue, oneByOne(handler), workOptions),
    workInBatches,
    async stop(drainMs = 7_000) {
      await boss.stop({ graceful: true, timeout: drainMs, close: true });
    },
  };
}
