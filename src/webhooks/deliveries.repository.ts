import type { Queryable } from "../db/database.ts";
import type { DeliveryAttemptRecord, DeliveryStatus } from "./webhooks.schemas.ts";

export interface DeliveryRow {
  id: string;
  webhookId: string;
  eventId: string;
  event: "submission.created" | "submission.spam" | "webhook.test";
  status: DeliveryStatus;
  attempts: DeliveryAttemptRecord[];
  /** Attempts made on the schedule (redeliveries are not): which step comes next. */
  scheduledAttempts: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

const DELIVERY_COLUMNS = `id, webhook_id AS "webhookId", event_id AS "eventId", event, status,
  attempts, scheduled_attempts AS "scheduledAttempts", next_attempt_at AS "nextAttemptAt",
  created_at AS "createdAt"`;

export interface NewDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  event: DeliveryRow["event"];
  body: string;
  createdAt: Date;
}

/** Pending, first attempt due at once. */
export async function insertDeliveries(db: Queryable, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  await db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event, body, status,
       next_attempt_at, created_at)
     SELECT d.id, d.webhook_id, d.event_id, d.event, d.body, 'pending', d.created_at, d.created_at
       FROM jsonb_to_recordset($1::text::jsonb) AS d(id text, webhook_id text, event_id text,
            event text, body text, created_at timestamptz)`,
    [
      JSON.stringify(
        deliveries.map((d) => ({
          id: d.id,
          webhook_id: d.webhookId,
          event_id: d.eventId,
          event: d.event,
          body: d.body,
          created_at: d.createdAt.toISOString(),
        })),
      ),
    ],
  );
}

/** The delivery, if its webhook belongs to the organization's form. */
export async function findDelivery(
  db: Queryable,
  organizationId: string,
  formId: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryRow | null> {
  const rows = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
      WHERE d.id = $4 AND d.webhook_id = $3 AND EXISTS (SELECT 1 FROM webhooks w
        WHERE w.id = $3 AND w.form_id = $2 AND w.organization_id = $1)`,
    [organizationId, formId, webhookId, deliveryId],
  );
  return rows[0] ?? null;
}

export async function listDeliveries(
  db: Queryable,
  webhookId: string,
  status: DeliveryStatus | null,
  limit: number,
  offset: bigint,
): Promise<{ total: number; rows: DeliveryRow[] }> {
  const where = "webhook_id = $1 AND ($2::text IS NULL OR status = $2)";
  const rows = await db.query<DeliveryRow & { total: string }>(
    `SELECT t.total, p.* FROM (SELECT count(*) AS total FROM webhook_deliveries WHERE ${where}) t
       LEFT JOIN LATERAL (SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4) p ON true
      ORDER BY p."createdAt" DESC, p.id DESC`,
    [webhookId, status, limit, offset.toString()],
  );
  return {
    total: Number(rows[0]?.total ?? 0),
    rows: rows[0]?.id ? rows.map(({ total: _total, ...row }) => row) : [],
  };
}

/** What an attempt needs: the delivery, its body and its webhook's URL, state and secrets. */
export interface DeliveryWork {
  id: string;
  webhookId: string;
  formId: string;
  eventId: string;
  event: DeliveryRow["event"];
  body: string;
  status: DeliveryStatus;
  scheduledAttempts: number;
  url: string;
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The work of each delivery still there (deleted with its webhook: absent), by id. */
export async function findDeliveriesWork(
  db: Queryable,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryWork>> {
  const rows = await db.query<DeliveryWork>(
    `SELECT d.id, d.webhook_id AS "webhookId", w.form_id AS "formId", d.event_id AS "eventId",
            d.event, d.body, d.status, d.scheduled_attempts AS "scheduledAttempts", w.url,
            w.enabled, w.secret, w.previous_secret AS "previousSecret",
            w.previous_secret_expires_at AS "previousSecretExpiresAt"
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.id IN (SELECT jsonb_array_elements_text($1::text::jsonb))`,
    [JSON.stringify(deliveryIds)],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

export interface AttemptRecord {
  attempt: DeliveryAttemptRecord;
  /** Counts on the schedule (false for a redelivery). */
  scheduled: boolean;
  status: DeliveryStatus;
  /** Undefined keeps the stored one (a redelivery of a pending delivery). */
  nextAttemptAt: Date | null | undefined;
}

export async function recordAttempt(
  db: Queryable,
  deliveryId: string,
  record: AttemptRecord,
): Promise<DeliveryRow | null> {
  const rows = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET attempts = attempts || jsonb_build_array($2::text::jsonb),
            scheduled_attempts = scheduled_attempts + CASE WHEN $3 THEN 1 ELSE 0 END,
            status = $4,
            next_attempt_at = CASE WHEN $5 THEN $6 ELSE next_attempt_at END
      WHERE id = $1
      RETURNING ${DELIVERY_COLUMNS}`,
    [
      deliveryId,
      JSON.stringify(record.attempt),
      record.scheduled,
      record.status,
      record.nextAttemptAt !== undefined,
      record.nextAttemptAt ?? null,
    ],
  );
  return rows[0] ?? null;
}

/**
 * Records an attempt of each delivery in one statement: at most one attempt per delivery (two of
 * the same delivery in one UPDATE would leave one unrecorded).
 */
export async function recordAttempts(
  db: Queryable,
  records: readonly { deliveryId: string; record: AttemptRecord }[],
): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `UPDATE webhook_deliveries d SET attempts = d.attempts || jsonb_build_array(r.attempt),
            scheduled_attempts = d.scheduled_attempts + CASE WHEN r.scheduled THEN 1 ELSE 0 END,
            status = r.status,
            next_attempt_at = CASE WHEN r.sets_next THEN r.next_attempt_at ELSE d.next_attempt_at END
       FROM jsonb_to_recordset($1::text::jsonb) AS r(id text, attempt jsonb, scheduled boolean,
            status text, sets_next boolean, next_attempt_at timestamptz)
      WHERE d.id = r.id`,
    [
      JSON.stringify(
        records.map(({ deliveryId, record }) => ({
          id: deliveryId,
          attempt: record.attempt,
          scheduled: record.scheduled,
          status: record.status,
          sets_next: record.nextAttemptAt !== undefined,
          next_attempt_at: record.nextAttemptAt?.toISOString() ?? null,
        })),
      ),
    ],
  );
}

/** Ends a delivery without an attempt (its webhook was disabled, or deleted meanwhile). */
export async function stopDelivery(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL
      WHERE id = $1 AND status = 'pending'`,
    [deliveryId],
  );
}

/** A 410 disables the webhook: its pending deliveries stop with it. */
export async function disableWebhook(db: Queryable, webhookId: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE webhooks SET enabled = false,
            updated_at = GREATEST($2, updated_at + interval '1 millisecond')
      WHERE id = $1 AND enabled`,
    [webhookId, now],
  );
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL
      WHERE webhook_id = $1 AND status = 'pending'`,
    [webhookId],
  );
}

/** A redelivery: the delivery is pending again until its attempt is recorded. */
export async function markRedelivery(db: Queryable, deliveryId: string, now: Date) {
  const rows = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET status = 'pending',
            next_attempt_at = CASE WHEN status = 'pending' THEN next_attempt_at ELSE $2 END
      WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
    [deliveryId, now],
  );
  return rows[0] ?? null;
}
