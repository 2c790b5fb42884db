import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { NoQuery } from "../forms/forms.schemas.ts";
import { apiOperation, success, WITH_BODY } from "../http/api-responses.ts";
import * as deliveries from "./deliveries.service.ts";
import type { WebhookRoutesOptions } from "./webhooks.routes.ts";
import {
  Delivery,
  DeliveryIdParams,
  DeliveryList,
  ListDeliveriesQuery,
  WebhookIdParams,
} from "./webhooks.schemas.ts";

const TENANT_RULE =
  "A form, webhook or delivery of another organization answers the same 404 as a missing one.";

const list = apiOperation({
  operationId: "listWebhookDeliveries",
  summary: "List a webhook's deliveries",
  description:
    "Newest first, each with its attempts (status, duration, error, the first 4,096 bytes of " +
    `the answer). \`status\` keeps only pending, succeeded or failed ones. ${TENANT_RULE}`,
  tags: ["webhooks"],
  access: "read",
});
const test = apiOperation({
  operationId: "sendWebhookTestEvent",
  summary: "Send a test event",
  description:
    "Enqueues a `webhook.test` event, `{form: {id, name}}`, for this webhook alone whatever its " +
    `events, its first attempt at once; answers the delivery. ${TENANT_RULE}`,
  tags: ["webhooks"],
  access: "full",
});
const redeliver = apiOperation({
  operationId: "redeliverWebhookDelivery",
  summary: "Redeliver",
  description:
    "Makes one more attempt of the delivery at once, whatever its state, with its original " +
    "body and `webhook-id` (a new `webhook-timestamp` and signature); answers the delivery. " +
    TENANT_RULE,
  tags: ["webhooks"],
  access: "full",
});

export const deliveriesRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (
  app,
  { db, queue, pending },
) => {
  app.get(
    "/forms/:formId/webhooks/:webhookId/deliveries",
    {
      config: list.config,
      schema: {
        ...list.schema,
        params: WebhookIdParams,
        querystring: ListDeliveriesQuery,
        response: list.responses(
          { 200: success(DeliveryList, "A page of deliveries.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request) => {
      await pending.relayForm(request.params.formId);
      return deliveries.listDeliveries(
        db,
        request.owner,
        request.params.formId,
        request.params.webhookId,
        request.query,
      );
    },
  );

  app.post(
    "/forms/:formId/webhooks/:webhookId/test",
    {
      config: test.config,
      schema: {
        ...test.schema,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: test.responses(
          { 202: success(Delivery, "Enqueued: the delivery.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const delivery = await deliveries.sendTestEvent(
        db,
        queue,
        request.owner,
        request.params.formId,
        request.params.webhookId,
      );
      return reply.code(202).send(delivery);
    },
  );

  app.post(
    "/forms/:formId/webhooks/:webhookId/deliveries/:deliveryId/redeliver",
    {
      config: redeliver.config,
      schema: {
        ...redeliver.schema,
        params: DeliveryIdParams,
        querystring: NoQuery,
        response: redeliver.responses(
          { 202: success(Delivery, "Enqueued: the delivery.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const delivery = await deliveries.redeliver(
        db,
        queue,
        request.owner,
        request.params.formId,
        request.params.webhookId,
        request.params.deliveryId,
      );
      return reply.code(202).send(delivery);
    },
  );
};
