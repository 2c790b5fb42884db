import type { Queryable } from "../db/database.ts";
import type { SubmissionRecord } from "../submissions/submissions.schemas.ts";
import { insertDeliveries, type NewDelivery } from "./deliveries.repository.ts";
import type { DeliveryQueue } from "./delivery-queue.ts";
import { newDeliveryId, newEventId } from "./webhook-ids.ts";

export interface SubmissionEvent {
  form: { id: string; name: string };
  /** The form's kept `webhookEnabled`: without an enabled webhook nothing is even looked up. */
  webhookEnabled: boolean;
  /** The submissions API's record, as it is (or, for `never` forms, would have been) stored. */
  submission: SubmissionRecord;
}

async function subscribedWebhooks(tx: Queryable, formId: string, event: string) {
  return tx.query<{ id: string }>(
    "SELECT id FROM webhooks WHERE form_id = $1 AND enabled AND $2 = ANY (events) ORDER BY id",
    [formId, event],
  );
}

/**
 * One delivery per enabled webhook subscribed to the event, stored and enqueued in `tx`, the
 * submission's own transaction: committed with the submission, or not at all. Accepted
 * submissions are `submission.created`, spam is `submission.spam`.
 */
export async function enqueueSubmissionEvent(
  tx: Queryable,
  queue: DeliveryQueue,
  { form, webhookEnabled, submission }: SubmissionEvent,
): Promise<void> {
  if (!webhookEnabled) return;
  const type = submission.isSpam ? "submission.spam" : "submission.created";
  const webhooks = await subscribedWebhooks(tx, form.id, type);
  if (webhooks.length === 0) return;
  const now = new Date();
  const eventId = newEventId();
  const body = JSON.stringify({
    type,
    timestamp: submission.createdAt,
    data: { form: { id: form.id, name: form.name }, submission },
  });
  const deliveries: NewDelivery[] = webhooks.map((webhook) => ({
    id: newDeliveryId(),
    webhookId: webhook.id,
    eventId,
    event: type,
    body,
    createdAt: now,
  }));
  await insertDeliveries(tx, deliveries);
  for (const delivery of deliveries) {
    await queue.enqueue(tx, {
      deliveryId: delivery.id,
      kind: "scheduled",
      attempt: 1,
      resume: false,
    });
  }
}
