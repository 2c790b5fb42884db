import { randomBytes } from "node:crypto";

/** Opaque, URL-safe, unguessable ids (128 random bits), as src/ids.ts makes them. */
const id = (prefix: string) => `${prefix}_${randomBytes(16).toString("base64url")}`;

export const newWebhookId = () => id("wh");
export const newDeliveryId = () => id("dlv");
/** Standard Webhooks names the message id `msg_…`: the `webhook-id` of every attempt. */
export const newEventId = () => id("msg");

export const WEBHOOK_ID = /^wh_[A-Za-z0-9_-]{22}$/;
export const DELIVERY_ID = /^dlv_[A-Za-z0-9_-]{22}$/;
