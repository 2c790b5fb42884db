import type { Job, JobResult } from "pg-boss";
import type { TaskSlots } from "../task-slots.ts";
import type { SpareCapacity } from "./spare-capacity.ts";

/** What a handler is given: the data the job was enqueued with. */
export type JobHandler<Data> = (data: Data) => Promise<void>;

/**
 * What a batch handler is given: the data of the jobs fetched together, so that it can read and
 * record them in a few statements rather than a few per job. It answers, per job and in order,
 * null when the job is done, or the error that fails it (run again later). A handler that throws
 * fails every job of the batch.
 */
export type BatchHandler<Data> = (batch: readonly Data[]) => Promise<(Error | null)[]>;

/** What a handler threw, as an Error (a job's failure output is its message). */
export const asError = (error: unknown) =>
  error instanceof Error ? error : new Error(String(error));

/** Each job run by `handler` on its own: an error is that job's failure only. */
export const oneByOne =
  <Data>(handler: JobHandler<Data>): BatchHandler<Data> =>
  (batch) =>
    Promise.all(batch.map((data) => handler(data).then(() => null, asError)));

/**
 * The data of one job that carries several items (JobQueue.enqueueAll): a relayed batch of
 * events is one row of the job engine, not one per email or delivery. Each row costs an insert,
 * a fetch and a completion, each a new version of a row with several indexes: per item, that
 * was most of what relaying an event wrote.
 */
interface ItemsJob<Data> {
  batchOf: Data[];
}

export const itemsJob = <Data>(items: readonly Data[]): ItemsJob<Data> => ({ batchOf: [...items] });

function itemsOf<Data>(data: Data | ItemsJob<Data>): Data[] {
  const items = (data as Partial<ItemsJob<Data>> | null)?.batchOf;
  return Array.isArray(items) ? items : [data as Data];
}

export interface FetchedJobsRun<Data> {
  handler: BatchHandler<Data>;
  /** Items handed to the handler at once. */
  chunkSize: number;
  /** Shared by the fetchers of a queue: bounds the chunks running at once on the instance. */
  slots: TaskSlots;
  /** What each chunk waits for before it runs: requests come first. */
  capacity: SpareCapacity;
}

/**
 * The fetched jobs' items run in chunks of `chunkSize`, as many chunks at once as `slots` allows;
 * a job completes when all its items did, and fails (all of it runs again later) with the first
 * error of any. So a handler must find an item it has done already and do nothing, as it must
 * anyway for a job run again after a crash.
 */
export async function runFetchedJobs<Data>(
  jobs: readonly Job<Data | ItemsJob<Data>>[],
  run: FetchedJobsRun<Data>,
): Promise<JobResult[]> {
  const items = jobs.flatMap((job, owner) => itemsOf(job.data).map((data) => ({ owner, data })));
  const errors: (Error | null)[] = jobs.map(() => null);
  const chunks: (typeof items)[] = [];
  for (let start = 0; start < items.length; start += run.chunkSize) {
    chunks.push(items.slice(start, start + run.chunkSize));
  }
  await Promise.all(
    chunks.map((chunk) =>
      run.slots.run(async () => {
        // Requests first: on a saturated instance a chunk waits (src/jobs/spare-capacity.ts).
        await run.capacity.wait();
        const outcomes = await run
          .handler(chunk.map((item) => item.data))
          .catch((error: unknown) => chunk.map(() => asError(error)));
        chunk.forEach((item, i) => {
          const error = outcomes[i] ?? null;
          if (error && !errors[item.owner]) errors[item.owner] = error;
        });
      }),
    ),
  );
  return jobs.map((job, owner) => {
    const error = errors[owner];
    return error
      ? { id: job.id, status: "failed", output: { message: error.message } }
      : { id: job.id, status: "completed" };
  });
}
