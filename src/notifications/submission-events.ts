import { randomUUID } from "node:crypto";
import type { Queryable } from "../db/database.ts";
import type { IntakeForm } from "../intake/intake.repository.ts";
import type { JobQueue } from "../jobs/queue.ts";
import type { SubmissionRecord } from "../submissions/submissions.schemas.ts";
import { enqueueSubmissionEvents } from "../webhooks/webhook-events.ts";
import { deliveryQueueOn } from "../webhooks/webhook-worker.ts";
import { type EmailSettings, enqueueEmails, mayEmail } from "./email/enqueue-emails.ts";

/** What notifications read of the form: kept with an event that waits in the outbox. */
export type NotifyingForm = Pick<IntakeForm, "id" | "name" | "plan" | "settings">;

/** What an accepted submission tells its notifications. */
export interface SubmissionEvent {
  form: NotifyingForm;
  /** The submissions API's record, built before the store (`never` stores nothing). */
  submission: SubmissionRecord;
  isSpam: boolean;
}

export interface SubmissionEvents {
  /**
   * Names this instance's events in the outbox: the intake's one statement leaves them there, and
   * this instance's relay takes them (src/notifications/event-relay.ts).
   */
  readonly relay: string;
  /**
   * Records and enqueues the submissions' emails (and webhook deliveries) in `tx`, the
   * submission's own transaction (or the relay's, for a batch from the outbox): they exist
   * exactly when the submissions were accepted. A batch costs a few statements, not a few per
   * event.
   */
  enqueueSubmissionEvents(tx: Queryable, events: readonly SubmissionEvent[]): Promise<void>;
}

/** Whether a submission to the form may cause an email or a webhook delivery. */
export const mayNotify = (form: Pick<NotifyingForm, "plan" | "settings">) =>
  form.settings.webhookEnabled === true || mayEmail(form);

export function createSubmissionEvents(queue: JobQueue, email: EmailSettings): SubmissionEvents {
  const deliveries = deliveryQueueOn(queue);
  return {
    relay: randomUUID(),
    async enqueueSubmissionEvents(tx, events) {
      // Spam sends no email (notifications.md §1); webhooks subscribed to it get spam.
      await enqueueEmails(
        tx,
        queue,
        email,
        events.filter((event) => !event.isSpam),
      );
      await enqueueSubmissionEvents(
        tx,
        deliveries,
        events.map((event) => ({
          form: { id: event.form.id, name: event.form.name },
          webhookEnabled: event.form.settings.webhookEnabled === true,
          submission: event.submission,
        })),
      );
    },
  };
}
