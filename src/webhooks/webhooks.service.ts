import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database, Queryable } from "../db/database.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import { AppError, formNotFound, invalid } from "../http/errors.ts";
import { paginationOf } from "../http/pagination.ts";
import { isPublicAddress, literalAddressOf } from "./address-guard.ts";
import { newSecret } from "./signing.ts";
import { newWebhookId, WEBHOOK_ID } from "./webhook-ids.ts";
import * as repository from "./webhooks.repository.ts";
import {
  type CreateWebhookInput,
  type ListWebhooksParams,
  MAX_WEBHOOKS_PER_FORM,
  type UpdateWebhookInput,
  type WebhookRecord,
} from "./webhooks.schemas.ts";

/** After a rotation the previous secret signs too, for a day, while receivers switch. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

export const webhookNotFound = () => new AppError("not_found", "webhook: not found");

export function toWebhookRecord(row: repository.WebhookRow): WebhookRecord {
  return {
    id: row.id,
    formId: row.formId,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * A URL whose host is an address that is not public is refused here already (its attempts would
 * all be refused); host names are checked at every attempt, where they are resolved.
 */
function requireAllowedUrl(url: string | undefined, allowPrivateNetworks: boolean) {
  if (url === undefined || allowPrivateNetworks) return;
  const address = literalAddressOf(new URL(url));
  if (address !== null && !isPublicAddress(address)) {
    throw invalid("url", `address not allowed: ${address}`);
  }
}

/** A form id that cannot be ours is a 404 before any query. */
function checkFormId(formId: string) {
  if (!FORM_ID.test(formId)) throw formNotFound();
}

/** A 404 naming what is missing: the form (or another organization's), else the webhook. */
async function notFound(db: Queryable, owner: KeyOwner, formId: string) {
  return (await repository.formExists(db, owner.organizationId, formId))
    ? webhookNotFound()
    : formNotFound();
}

export interface WebhookPolicy {
  allowPrivateNetworks: boolean;
}

export async function createWebhook(
  db: Database,
  policy: WebhookPolicy,
  owner: KeyOwner,
  formId: string,
  input: CreateWebhookInput,
) {
  checkFormId(formId);
  requireAllowedUrl(input.url, policy.allowPrivateNetworks);
  const secret = newSecret();
  const row = await db.transaction(async (tx) => {
    if (!(await repository.lockOwnForm(tx, owner.organizationId, formId))) throw formNotFound();
    if ((await repository.countWebhooks(tx, formId)) >= MAX_WEBHOOKS_PER_FORM) {
      throw invalid("webhooks", `at most ${MAX_WEBHOOKS_PER_FORM} per form`);
    }
    const created = await repository.insertWebhook(tx, {
      id: newWebhookId(),
      formId,
      organizationId: owner.organizationId,
      url: input.url,
      description: input.description ?? "",
      events: input.events ?? ["submission.created"],
      enabled: input.enabled ?? true,
      secret,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    await repository.refreshFormSummary(tx, formId);
    return created;
  });
  return { ...toWebhookRecord(row), secret };
}

export async function listWebhooks(
  db: Database,
  owner: KeyOwner,
  formId: string,
  params: ListWebhooksParams,
) {
  checkFormId(formId);
  const page = params.page ?? 1;
  const pageSize = params.pageSize ?? 20;
  const offset = BigInt(page - 1) * BigInt(pageSize);
  const found = await repository.listWebhooks(db, owner.organizationId, formId, pageSize, offset);
  if (!found) throw formNotFound();
  return listPage(found.rows.map(toWebhookRecord), found.total, page, pageSize);
}

/** The forms list's shape. */
export function listPage<T>(data: T[], total: number, page: number, pageSize: number) {
  return { data, meta: { total }, pagination: paginationOf(total, page, pageSize) };
}

export async function getWebhook(db: Queryable, owner: KeyOwner, formId: string, id: string) {
  checkFormId(formId);
  const row = WEBHOOK_ID.test(id)
    ? await repository.findWebhook(db, owner.organizationId, formId, id)
    : null;
  if (!row) throw await notFound(db, owner, formId);
  return row;
}

export async function updateWebhook(
  db: Database,
  policy: WebhookPolicy,
  owner: KeyOwner,
  formId: string,
  webhookId: string,
  input: UpdateWebhookInput,
) {
  checkFormId(formId);
  requireAllowedUrl(input.url, policy.allowPrivateNetworks);
  const row = await db.transaction(async (tx) => {
    if (!(await repository.lockOwnForm(tx, owner.organizationId, formId))) throw formNotFound();
    if (!WEBHOOK_ID.test(webhookId)) throw webhookNotFound();
    const updated = await repository.updateWebhook(
      tx,
      owner.organizationId,
      formId,
      webhookId,
      {
        url: input.url ?? null,
        description: input.description ?? null,
        events: input.events ?? null,
        enabled: input.enabled ?? null,
      },
      new Date(),
    );
    if (!updated) throw webhookNotFound();
    if (input.url !== undefined || input.enabled !== undefined) {
      await repository.refreshFormSummary(tx, formId);
    }
    return updated;
  });
  return toWebhookRecord(row);
}

export async function deleteWebhook(
  db: Database,
  owner: KeyOwner,
  formId: string,
  webhookId: string,
) {
  checkFormId(formId);
  await db.transaction(async (tx) => {
    if (!(await repository.lockOwnForm(tx, owner.organizationId, formId))) throw formNotFound();
    if (!WEBHOOK_ID.test(webhookId)) throw webhookNotFound();
    if (!(await repository.deleteWebhook(tx, owner.organizationId, formId, webhookId))) {
      throw webhookNotFound();
    }
    await repository.refreshFormSummary(tx, formId);
  });
}

export async function rotateSecret(
  db: Database,
  owner: KeyOwner,
  formId: string,
  webhookId: string,
) {
  checkFormId(formId);
  if (!WEBHOOK_ID.test(webhookId)) throw await notFound(db, owner, formId);
  const secret = newSecret();
  const now = new Date();
  const row = await repository.rotateSecret(
    db,
    owner.organizationId,
    formId,
    webhookId,
    secret,
    now,
    new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS),
  );
  if (!row) throw await notFound(db, owner, formId);
  return { ...toWebhookRecord(row), secret };
}
