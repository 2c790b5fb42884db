import type { Queryable } from "../db/database.ts";
import { AppError } from "../http/errors.ts";

/** One attempt of a delivery, as the queue carries it. */
export interface DeliveryJob {
  deliveryId: string;
  /**
   * `scheduled`: attempt number `attempt` of the schedule (1 to 8); a job whose attempt was
   * already recorded (a job run again after a crash) does nothing. `redelivery`: one attempt now,
   * outside the schedule; `resume` when the delivery was still pending on its schedule.
   */
  kind: "scheduled" | "redelivery";
  attempt: number;
  resume: boolean;
}

/**
 * Where attempts wait for their time: enqueued in the caller's transaction, run at `at`, or at
 * once without it. (An instant taken inside the transaction is later than the engine's `now()`,
 * the transaction's start: the job would wait for a poll instead of waking a worker.)
 */
export interface DeliveryQueue {
  enqueue(tx: Queryable, job: DeliveryJob, at?: Date): Promise<void>;
  /** The jobs, due at once, in one statement in `tx`. */
  enqueueAll(tx: Queryable, jobs: readonly DeliveryJob[]): Promise<void>;
}

/** For an app built without a queue: nothing can be enqueued, and saying so is a 503. */
const unavailable = () => {
  throw new AppError("service_unavailable", "queue: deliveries cannot be enqueued now");
};

export const noDeliveryQueue: DeliveryQueue = { enqueue: unavailable, enqueueAll: unavailable };
