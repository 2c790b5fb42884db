import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { FormIdParams, NoQuery } from "../forms/forms.schemas.ts";
import { apiOperation, success, WITH_BODY } from "../http/api-responses.ts";
import type { PendingEvents } from "../notifications/event-relay.ts";
import { deliveriesRoutes } from "./deliveries.routes.ts";
import type { DeliveryQueue } from "./delivery-queue.ts";
import {
  CreateWebhookBody,
  ListWebhooksQuery,
  UpdateWebhookBody,
  Webhook,
  WebhookIdParams,
  WebhookList,
  WebhookWithSecret,
} from "./webhooks.schemas.ts";
import * as webhooks from "./webhooks.service.ts";

export const TENANT_RULE =
  "A form or webhook of another organization answers the same 404 as a missing one.";

const CREATE_EXAMPLE = {
  url: "https://hooks.example.com/formdeck",
  description: "CRM sync",
  events: ["submission.created"],
};
const UPDATE_EXAMPLE = { events: ["submission.created", "submission.spam"] };

const list = apiOperation({
  operationId: "listWebhooks",
  summary: "List a form's webhooks",
  description: `Newest first. ${TENANT_RULE}`,
  tags: ["webhooks"],
  access: "read",
});
const create = apiOperation({
  operationId: "createWebhook",
  summary: "Create a webhook",
  description:
    "Events of the form are posted to `url`, signed as Standard Webhooks specifies " +
    "(`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer holds the signing " +
    "`secret`, returned only here and by rotate-secret. At most 10 webhooks per form. " +
    TENANT_RULE,
  tags: ["webhooks"],
  access: "full",
});
const read = apiOperation({
  operationId: "getWebhook",
  summary: "Read a webhook",
  description: TENANT_RULE,
  tags: ["webhooks"],
  access: "read",
});
const update = apiOperation({
  operationId: "updateWebhook",
  summary: "Update a webhook",
  description:
    "Changes only the members sent. Disabling a webhook stops its pending deliveries. " +
    TENANT_RULE,
  tags: ["webhooks"],
  access: "full",
});
const remove = apiOperation({
  operationId: "deleteWebhook",
  summary: "Delete a webhook",
  description: `Deletes the webhook and its deliveries. ${TENANT_RULE}`,
  tags: ["webhooks"],
  access: "full",
});
const rotate = apiOperation({
  operationId: "rotateWebhookSecret",
  summary: "Rotate a webhook's secret",
  description:
    "Answers the webhook with its new `secret`. For 24 hours every attempt carries two " +
    "signatures, the new secret's first; a second rotation within that day drops the oldest. " +
    TENANT_RULE,
  tags: ["webhooks"],
  access: "full",
});

export interface WebhookRoutesOptions {
  db: Database;
  queue: DeliveryQueue;
  allowPrivateNetworks: boolean;
  /** Relays a form's pending submission events, so that its deliveries are all there to read. */
  pending: PendingEvents;
}

export const webhooksRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (
  app,
  options,
) => {
  const { db } = options;
  const policy = { allowPrivateNetworks: options.allowPrivateNetworks };

  app.get(
    "/forms/:formId/webhooks",
    {
      config: list.config,
      schema: {
        ...list.schema,
        params: FormIdParams,
        querystring: ListWebhooksQuery,
        response: list.responses(
          { 200: success(WebhookList, "A page of webhooks.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) => webhooks.listWebhooks(db, request.owner, request.params.formId, request.query),
  );

  app.post(
    "/forms/:formId/webhooks",
    {
      config: create.config,
      schema: {
        ...create.schema,
        params: FormIdParams,
        querystring: NoQuery,
        body: { ...CreateWebhookBody, examples: [CREATE_EXAMPLE] },
        response: create.responses(
          { 201: success(WebhookWithSecret, "Created, with its secret.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const created = await webhooks.createWebhook(
        db,
        policy,
        request.owner,
        request.params.formId,
        request.body,
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    "/forms/:formId/webhooks/:webhookId",
    {
      config: read.config,
      schema: {
        ...read.schema,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: read.responses(
          { 200: success(Webhook, "The webhook.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request) =>
      webhooks.toWebhookRecord(
        await webhooks.getWebhook(
          db,
          request.owner,
          request.params.formId,
          request.params.webhookId,
        ),
      ),
  );

  app.patch(
    "/forms/:formId/webhooks/:webhookId",
    {
      config: update.config,
      schema: {
        ...update.schema,
        params: WebhookIdParams,
        querystring: NoQuery,
        body: { ...UpdateWebhookBody, examples: [UPDATE_EXAMPLE] },
        response: update.responses(
          { 200: success(Webhook, "The webhook as updated.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) =>
      webhooks.updateWebhook(
        db,
        policy,
        request.owner,
        request.params.formId,
        request.params.webhookId,
        request.body,
      ),
  );

  app.delete(
    "/forms/:formId/webhooks/:webhookId",
    {
      config: remove.config,
      schema: {
        ...remove.schema,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: remove.responses(
          { 204: success(Type.Null(), "Deleted.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      await webhooks.deleteWebhook(
        db,
        request.owner,
        request.params.formId,
        request.params.webhookId,
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/forms/:formId/webhooks/:webhookId/rotate-secret",
    {
      config: rotate.config,
      schema: {
        ...rotate.schema,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: rotate.responses(
          { 200: success(WebhookWithSecret, "The webhook, with its new secret.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) =>
      webhooks.rotateSecret(db, request.owner, request.params.formId, request.params.webhookId),
  );

  await app.register(deliveriesRoutes, {
    db,
    queue: options.queue,
    allowPrivateNetworks: options.allowPrivateNetworks,
    pending: options.pending,
  });
};
