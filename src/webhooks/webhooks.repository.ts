import type { Queryable } from "../db/database.ts";
import type { WebhookEvent } from "./webhooks.schemas.ts";

export interface WebhookRow {
  id: string;
  formId: string;
  url: string;
  description: string;
  events: WebhookEvent[];
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const WEBHOOK_COLUMNS = `id, form_id AS "formId", url, description, events, enabled,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * Locks the organization's form for a change of its webhooks: changes of one form's webhooks
 * take turns, so that the count of ten holds and the form's summary is written last by the last.
 */
export async function lockOwnForm(
  db: Queryable,
  organizationId: string,
  formId: string,
): Promise<boolean> {
  const rows = await db.query(
    "SELECT id FROM forms WHERE organization_id = $1 AND id = $2 FOR NO KEY UPDATE",
    [organizationId, formId],
  );
  return rows.length > 0;
}

export async function formExists(db: Queryable, organizationId: string, formId: string) {
  const rows = await db.query("SELECT 1 FROM forms WHERE organization_id = $1 AND id = $2", [
    organizationId,
    formId,
  ]);
  return rows.length > 0;
}

/** The form an event is about, as every payload names it. */
export async function formSummary(db: Queryable, formId: string) {
  const rows = await db.query<{ id: string; name: string }>(
    "SELECT id, name FROM forms WHERE id = $1",
    [formId],
  );
  return rows[0] as { id: string; name: string };
}

/** The enabled webhooks of the forms, in id order: those events of the forms are delivered to. */
export async function enabledWebhooksOfForms(
  db: Queryable,
  formIds: readonly string[],
): Promise<Pick<WebhookRow, "id" | "formId" | "events">[]> {
  return db.query(
    `SELECT id, form_id AS "formId", events FROM webhooks
      WHERE form_id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND enabled
      ORDER BY id`,
    [JSON.stringify(formIds)],
  );
}

export async function countWebhooks(db: Queryable, formId: string): Promise<number> {
  const rows = await db.query<{ count: string }>(
    "SELECT count(*) AS count FROM webhooks WHERE form_id = $1",
    [formId],
  );
  return Number(rows[0]?.count ?? 0);
}

export async function insertWebhook(
  db: Queryable,
  webhook: WebhookRow & { organizationId: string; secret: string },
): Promise<WebhookRow> {
  const rows = await db.query<WebhookRow>(
    `INSERT INTO webhooks (id, form_id, organization_id, url, description, events, enabled,
       secret, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     RETURNING ${WEBHOOK_COLUMNS}`,
    [
      webhook.id,
      webhook.formId,
      webhook.organizationId,
      webhook.url,
      webhook.description,
      webhook.events,
      webhook.enabled,
      webhook.secret,
      webhook.createdAt,
    ],
  );
  return rows[0] as WebhookRow;
}

/** Rows of the page, newest first, and the form's total; null when the form is not theirs. */
export async function listWebhooks(
  db: Queryable,
  organizationId: string,
  formId: string,
  limit: number,
  offset: bigint,
): Promise<{ total: number; rows: WebhookRow[] } | null> {
  const rows = await db.query<WebhookRow & { total: string }>(
    `SELECT (SELECT count(*) FROM webhooks WHERE form_id = f.id) AS total, w.*
       FROM forms f
       LEFT JOIN LATERAL (SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE form_id = f.id
          ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4) w ON true
      WHERE f.organization_id = $1 AND f.id = $2
      ORDER BY w."createdAt" DESC, w.id DESC`,
    [organizationId, formId, limit, offset.toString()],
  );
  if (rows.length === 0) return null;
  const total = Number(rows[0]?.total ?? 0);
  return {
    total,
    rows: rows[0]?.id ? rows.map(({ total: _total, ...row }) => row) : [],
  };
}

export async function findWebhook(
  db: Queryable,
  organizationId: string,
  formId: string,
  webhookId: string,
): Promise<WebhookRow | null> {
  const rows = await db.query<WebhookRow>(
    `SELECT ${WEBHOOK_COLUMNS} FROM webhooks
      WHERE organization_id = $1 AND form_id = $2 AND id = $3`,
    [organizationId, formId, webhookId],
  );
  return rows[0] ?? null;
}

export interface WebhookChanges {
  url: string | null;
  description: string | null;
  events: WebhookEvent[] | null;
  enabled: boolean | null;
}

export async function updateWebhook(
  db: Queryable,
  organizationId: string,
  formId: string,
  webhookId: string,
  changes: WebhookChanges,
  now: Date,
): Promise<WebhookRow | null> {
  const rows = await db.query<WebhookRow>(
    `UPDATE webhooks SET url = COALESCE($4, url), description = COALESCE($5, description),
            events = COALESCE($6, events), enabled = COALESCE($7, enabled),
            updated_at = GREATEST($8, updated_at + interval '1 millisecond')
      WHERE organization_id = $1 AND form_id = $2 AND id = $3
      RETURNING ${WEBHOOK_COLUMNS}`,
    [
      organizationId,
      formId,
      webhookId,
      changes.url,
      changes.description,
      changes.events,
      changes.enabled,
      now,
    ],
  );
  return rows[0] ?? null;
}

export async function deleteWebhook(
  db: Queryable,
  organizationId: string,
  formId: string,
  webhookId: string,
): Promise<boolean> {
  const rows = await db.query(
    "DELETE FROM webhooks WHERE organization_id = $1 AND form_id = $2 AND id = $3 RETURNING id",
    [organizationId, formId, webhookId],
  );
  return rows.length > 0;
}

/**
 * The new secret becomes the current one; the current one signs too until `previousUntil`. A
 * previous secret still in its window is dropped: never more than two.
 */
export async function rotateSecret(
  db: Queryable,
  organizationId: string,
  formId: string,
  webhookId: string,
  secret: string,
  now: Date,
  previousUntil: Date,
): Promise<WebhookRow | null> {
  const rows = await db.query<WebhookRow>(
    `UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = $5,
            secret = $4, updated_at = GREATEST($6, updated_at + interval '1 millisecond')
      WHERE organization_id = $1 AND form_id = $2 AND id = $3
      RETURNING ${WEBHOOK_COLUMNS}`,
    [organizationId, formId, webhookId, secret, previousUntil, now],
  );
  return rows[0] ?? null;
}

/**
 * The form's read-only `webhookEnabled` and `webhookUrl`, kept in its settings document so that
 * reading a form costs nothing more: written in the transaction of every change of its webhooks.
 */
export async function refreshFormSummary(db: Queryable, formId: string): Promise<void> {
  await db.query(
    `UPDATE forms SET revision = revision + 1, settings = settings || jsonb_build_object(
        'webhookEnabled', EXISTS (SELECT 1 FROM webhooks WHERE form_id = $1 AND enabled),
        'webhookUrl', COALESCE((SELECT url FROM webhooks WHERE form_id = $1 AND enabled
                                 ORDER BY created_at, id LIMIT 1), ''))
      WHERE id = $1`,
    [formId],
  );
}
