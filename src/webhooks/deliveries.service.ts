import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database } from "../db/database.ts";
import { AppError } from "../http/errors.ts";
import * as deliveries from "./deliveries.repository.ts";
import type { DeliveryQueue } from "./delivery-queue.ts";
import { DELIVERY_ID, newDeliveryId, newEventId } from "./webhook-ids.ts";
import { formSummary } from "./webhooks.repository.ts";
import type { DeliveryRecord, ListDeliveriesParams } from "./webhooks.schemas.ts";
import { getWebhook, listPage } from "./webhooks.service.ts";

export const deliveryNotFound = () => new AppError("not_found", "delivery: not found");

export function toDeliveryRecord(row: deliveries.DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    eventId: row.eventId,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function listDeliveries(
  db: Database,
  owner: KeyOwner,
  formId: string,
  webhookId: string,
  params: ListDeliveriesParams,
) {
  const webhook = await getWebhook(db, owner, formId, webhookId);
  const page = params.page ?? 1;
  const pageSize = params.pageSize ?? 20;
  const offset = BigInt(page - 1) * BigInt(pageSize);
  const found = await deliveries.listDeliveries(
    db,
    webhook.id,
    params.status ?? null,
    pageSize,
    offset,
  );
  return listPage(found.rows.map(toDeliveryRecord), found.total, page, pageSize);
}

/** A `webhook.test` event for this webhook alone, whatever its events; its first attempt now. */
export async function sendTestEvent(
  db: Database,
  queue: DeliveryQueue,
  owner: KeyOwner,
  formId: string,
  webhookId: string,
) {
  const webhook = await getWebhook(db, owner, formId, webhookId);
  const form = await formSummary(db, formId);
  const now = new Date();
  const delivery: deliveries.NewDelivery = {
    id: newDeliveryId(),
    webhookId: webhook.id,
    eventId: newEventId(),
    event: "webhook.test",
    body: JSON.stringify({
      type: "webhook.test",
      timestamp: now.toISOString(),
      data: { form: { id: form.id, name: form.name } },
    }),
    createdAt: now,
  };
  const row = await db.transaction(async (tx) => {
    await deliveries.insertDeliveries(tx, [delivery]);
    await queue.enqueue(tx, {
      deliveryId: delivery.id,
      kind: "scheduled",
      attempt: 1,
      resume: false,
    });
    return deliveries.findDelivery(tx, owner.organizationId, formId, webhookId, delivery.id);
  });
  return toDeliveryRecord(row as deliveries.DeliveryRow);
}

/** One attempt now, with the original body and `webhook-id`, whatever the delivery's state. */
export async function redeliver(
  db: Database,
  queue: DeliveryQueue,
  owner: KeyOwner,
  formId: string,
  webhookId: string,
  deliveryId: string,
) {
  await getWebhook(db, owner, formId, webhookId);
  if (!DELIVERY_ID.test(deliveryId)) throw deliveryNotFound();
  const row = await db.transaction(async (tx) => {
    const found = await deliveries.findDelivery(
      tx,
      owner.organizationId,
      formId,
      webhookId,
      deliveryId,
    );
    if (!found) throw deliveryNotFound();
    const now = new Date();
    const marked = await deliveries.markRedelivery(tx, deliveryId, now);
    await queue.enqueue(tx, {
      deliveryId,
      kind: "redelivery",
      attempt: 0,
      resume: found.status === "pending",
    });
    return marked;
  });
  return toDeliveryRecord(row as deliveries.DeliveryRow);
}
