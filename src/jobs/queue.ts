import type { FastifyBaseLogger } from "fastify";
import { type Db, PgBoss } from "pg-boss";
import type { Database, Queryable } from "../db/database.ts";
import { TaskSlots } from "../task-slots.ts";
import {
  type BatchHandler,
  itemsJob,
  type JobHandler,
  oneByOne,
  runFetchedJobs,
} from "./job-batches.ts";
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

/**
 * Elements of `enqueueAll` per job: a relay's batch of 50 events is one, and a larger batch (a
 * read's relay of 500, a backlog) several, which the fetchers of every instance share.
 */
const ITEMS_PER_JOB = 100;

/** How often a worker looks for jobs that came due (a retry's startAfter) rather than new ones. */
const POLL_SECONDS = 2;

export interface EnqueueOptions {
  /** Not before this instant. */
  startAfter?: Date;
}

export interface WorkOptions {
  /** Items (jobs, or the elements of one from `enqueueAll`) run at once here (default 2). */
  concurrency?: number;
  /**
   * Statements fetching jobs at once (default 1). A fetch's items are handed to the handler in
   * chunks of `concurrency / fetchers`, and `fetchers` chunks run at once on the instance: a
   * fetch is taken again once its chunks are all done, so a slow item holds back its chunk's
   * others, and its fetch.
   */
  fetchers?: number;
}

export interface JobQueue {
  /**
   * Adds a job to `queue` in `tx`, a transaction of ours: it exists once that transaction
   * commits, and never if it rolls back.
   */
  enqueue(tx: Queryable, queue: string, data: object, options?: EnqueueOptions): Promise<void>;
  /**
   * Adds the elements of `batch`, to run at once, as jobs of up to 100 elements in one statement
   * in `tx` (as `enqueue`): the handler is given each element as the data of a job of its own,
   * but those of a job complete together, or fail and all run again (src/jobs/job-batches.ts).
   */
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
    // Each fetcher takes up to its share of the slots in jobs in one statement and runs their
    // items in chunks of that share, each job completed or failed on its own. Few fetchers, not
    // one per slot: a job enqueued wakes every fetcher of its queue (NOTIFY), and each wake-up
    // is a statement. A fetcher that got jobs fetches again as soon as they are done
    // (notifyWorker) instead of waiting for its next poll: a backlog goes at the workers' pace,
    // not a batch per poll.
    const batchSize = Math.ceil(concurrency / fetchers);
    const run = { handler, chunkSize: batchSize, slots: new TaskSlots(fetchers), capacity };
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
          const results = await runFetchedJobs(jobs, run);
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
      // Rows of ITEMS_PER_JOB, inserted in one statement with the queue's options as send's
      // (and at most one NOTIFY).
      const jobs = [];
      for (let start = 0; start < batch.length; start += ITEMS_PER_JOB) {
        const items = batch.slice(start, start + ITEMS_PER_JOB);
        jobs.push({ data: items.length === 1 ? items[0] : itemsJob(items) });
      }
      await boss.insert(queue, jobs, { db: inTransaction(tx) });
    },
    work: (queue, handler, workOptions) => workInBatches(queue, oneByOne(handler), workOptions),
    workInBatches,
    async stop(drainMs = 7_000) {
      await boss.stop({ graceful: true, timeout: drainMs, close: true });
    },
  };
}
