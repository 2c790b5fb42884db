import assert from "node:assert/strict";
import type { App, Body } from "../forms/form-fixtures.ts";
import { createTenant, testDatabase } from "../helpers.ts";

export const FORMS = "/api/v1/forms";
export const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface Reply {
  status: number;
  body: Body;
}

/** The API as one key of one organization calls it. */
export function apiOf(app: App, key: string) {
  const call = async (
    method: "GET" | "POST" | "PATCH" | "DELETE",
    url: string,
    payload?: object,
  ): Promise<Reply> => {
    const res = await app.inject({
      method,
      url,
      headers: { "api-key": key },
      ...(payload === undefined ? {} : { payload }),
    });
    return { status: res.statusCode, body: res.body === "" ? {} : res.json() };
  };
  return {
    call,
    async newForm(name = "webhook form"): Promise<Body> {
      const res = await call("POST", FORMS, { name });
      assert.equal(res.status, 201);
      return res.body;
    },
    async newWebhook(formId: string, body: object): Promise<Body> {
      const res = await call("POST", `${FORMS}/${formId}/webhooks`, body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body;
    },
    webhooksUrl: (formId: string) => `${FORMS}/${formId}/webhooks`,
  };
}

export const unprocessable = (message: string) => ({
  error: { code: "unprocessable_entity", message },
});

/** The record the API answers, from a create's answer: everything but the secret. */
export function withoutSecret(created: Body): Body {
  const { secret: _secret, ...record } = created;
  return record;
}

/** A new organization's API with its full key, and `read` with its read key. */
export async function tenantApiOf(app: App) {
  const tenant = await createTenant();
  return { ...apiOf(app, tenant.fullKey), read: apiOf(app, tenant.readKey) };
}

/** The form's webhooks as stored, secrets included, oldest first. */
export async function storedWebhooks(formId: string) {
  return (await testDatabase()).query<Record<string, unknown>>(
    `SELECT url, description, events, enabled, secret, previous_secret AS "previousSecret",
            previous_secret_expires_at AS "previousSecretExpiresAt"
       FROM webhooks WHERE form_id = $1 ORDER BY created_at, id`,
    [formId],
  );
}
