import { type Static, Type } from "typebox";
import { MAX_PAGE } from "../forms/forms.schemas.ts";
import { Pagination } from "../http/pagination.ts";

export const WEBHOOK_EVENTS = ["submission.created", "submission.spam"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** Every event type a delivery can carry: the subscribable ones and the test event. */
export const DELIVERY_EVENTS = [...WEBHOOK_EVENTS, "webhook.test"] as const;
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const MAX_WEBHOOKS_PER_FORM = 10;

const OneOf = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: "string", enum: values, ...(description && { description }) });
const Timestamp = Type.String({ format: "date-time", description: "ISO 8601, UTC, milliseconds" });

/** The members a client may write; create requires `url`, update takes any of them. */
const writable = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    format: "http-url",
    description:
      "Absolute http or https URL the events are posted to. An IP address that is not public " +
      "(loopback, private, link-local, CGNAT, reserved...) is refused, in any notation.",
  }),
  description: Type.String({ maxLength: 500, format: "single-line", description: "One line" }),
  events: Type.Array(OneOf(WEBHOOK_EVENTS), {
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length,
    uniqueItems: true,
    description: "The events sent to this webhook",
  }),
  enabled: Type.Boolean({
    description: "A disabled webhook is sent no new events, and its pending deliveries stop",
  }),
};

export const CreateWebhookBody = Type.Object(
  {
    url: writable.url,
    description: Type.Optional(writable.description),
    events: Type.Optional(writable.events),
    enabled: Type.Optional(writable.enabled),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(writable.url),
    description: Type.Optional(writable.description),
    events: Type.Optional(writable.events),
    enabled: Type.Optional(writable.enabled),
  },
  { additionalProperties: false },
);

export type CreateWebhookInput = Static<typeof CreateWebhookBody>;
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const Webhook = Type.Object({
  id: Type.String(),
  formId: Type.String(),
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(OneOf(WEBHOOK_EVENTS)),
  enabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export type WebhookRecord = Static<typeof Webhook>;

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({
    description:
      "`whsec_` and the base64 of 32 random bytes: the key of the `webhook-signature` HMAC. " +
      "Returned only here",
  }),
});

const page = Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }));
const pageSize = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 }));

export const ListWebhooksQuery = Type.Object({ page, pageSize }, { additionalProperties: false });
export type ListWebhooksParams = Static<typeof ListWebhooksQuery>;

export const WebhookList = Type.Object({
  data: Type.Array(Webhook),
  meta: Type.Object({ total: Type.Integer() }),
  pagination: Pagination,
});

export const DeliveryAttempt = Type.Object({
  at: Timestamp,
  statusCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "The receiver's status; null when no answer came (refused address, timeout...)",
  }),
  durationMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: "Why the attempt failed" }),
  responseBody: Type.Union([Type.String(), Type.Null()], {
    description: "The first 4,096 bytes of the answer, as UTF-8 text",
  }),
});

export type DeliveryAttemptRecord = Static<typeof DeliveryAttempt>;

export const Delivery = Type.Object({
  id: Type.String(),
  eventId: Type.String({ description: "The `webhook-id` header of every attempt" }),
  event: OneOf(DELIVERY_EVENTS),
  status: OneOf(DELIVERY_STATUSES),
  attempts: Type.Array(DeliveryAttempt, { description: "Oldest first" }),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], {
    description: "When the next scheduled attempt runs; null when none is scheduled",
  }),
  createdAt: Timestamp,
});

export type DeliveryRecord = Static<typeof Delivery>;

export const ListDeliveriesQuery = Type.Object(
  { page, pageSize, status: Type.Optional(OneOf(DELIVERY_STATUSES)) },
  { additionalProperties: false },
);
export type ListDeliveriesParams = Static<typeof ListDeliveriesQuery>;

export const DeliveryList = Type.Object({
  data: Type.Array(Delivery),
  meta: Type.Object({ total: Type.Integer() }),
  pagination: Pagination,
});

export const WebhookIdParams = Type.Object({
  formId: Type.String({ description: "Form id" }),
  webhookId: Type.String({ description: "Webhook id" }),
});

export const DeliveryIdParams = Type.Object({
  formId: Type.String({ description: "Form id" }),
  webhookId: Type.String({ description: "Webhook id" }),
  deliveryId: Type.String({ description: "Delivery id" }),
});
