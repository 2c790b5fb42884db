import type { Queryable } from "../db/database.ts";
import type { SubmissionRecord } from "../submissions/submissions.schemas.ts";
import { insertDeliveries, type NewDelivery } from "./deliveries.repository.ts";
import type { DeliveryJob, DeliveryQueue } from "./delivery-queue.ts";
import { newDeliveryId, newEventId } from "./webhook-ids.ts";
import { enabledWebhooksOfForms } from "./webhooks.repository.ts";

export interface SubmissionEvent {
  form: { id: string; name: string };
  /** The form's kept `webhookEnabled`: without an enabled webhook nothing is even looked up. */
  webhookEnabled: boolean;
  /** The submissions API's record, as it is (or, for `never` forms, would have been) stored. */
  submission: SubmissionRecord;
}

/**
 * One delivery per enabled webhook subscribed to each event, stored and enqueued in `tx`, the
 * submission's own transaction (or the relay's, for a batch of events): committed with them, or
 * not at all. Accepted submissions are `submission.created`, spam is `submission.spam`. The
 * webhooks of every form of the batch are read, the deliveries written and their jobs enqueued
 * in a statement each, whatever the number of events.
 */
export async function enqueueSubmissionEvents(
  tx: Queryable,
  queue: DeliveryQueue,
  events: readonly SubmissionEvent[],
): Promise<void> {
  const notifying = events.filter((event) => event.webhookEnabled);
  if (notifying.length === 0) return;
  const webhooks = await enabledWebhooksOfForms(tx, [
    ...new Set(notifying.map((event) => event.form.id)),
  ]);
  const now = new Date();
  const deliveries: NewDelivery[] = [];
  for (const { form, submission } of notifying) {
    const type = submission.isSpam ? "submission.spam" : "submission.created";
    const subscribed = webhooks.filter(
      (webhook) => webhook.formId === form.id && webhook.events.includes(type),
    );
    if (subscribed.length === 0) continue;
    const eventId = newEventId();
    const body = JSON.stringify({
      type,
      timestamp: submission.createdAt,
      data: { form: { id: form.id, name: form.name }, submission },
    });
    for (const webhook of subscribed) {
      deliveries.push({
        id: newDeliveryId(),
        webhookId: webhook.id,
        eventId,
        event: type,
        body,
        createdAt: now,
      });
    }
  }
  if (deliveries.length === 0) return;
  await insertDeliveries(tx, deliveries);
  await queue.enqueueAll(
    tx,
    deliveries.map(
      (delivery): DeliveryJob => ({
        deliveryId: delivery.id,
        kind: "scheduled",
        attempt: 1,
        resume: false,
      }),
    ),
  );
}
