import assert from "node:assert/strict";
import type { Body } from "../forms/form-fixtures.ts";
import { post } from "../intake/intake-fixtures.ts";
import { type DeliveryApp, waitFor } from "./delivery-harness.ts";
import { type Answer, startReceiver } from "./receiver.ts";
import { type apiOf, FORMS } from "./webhook-fixtures.ts";

export type Api = ReturnType<typeof apiOf>;

/** What delivery tests do on a running app (`app()`: the one their `before` started). */
export function deliveryTools(app: () => DeliveryApp) {
  async function deliveriesOf(api: Api, formId: string, webhookId: string, query = "") {
    const url = `${FORMS}/${formId}/webhooks/${webhookId}/deliveries${query}`;
    const res = await api.call("GET", url);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }
  return {
    /** A receiver, a form named Contact and a webhook to it; `hook` overrides its members. */
    async setUp(answer?: Answer, hook: object = {}) {
      const receiver = await startReceiver(answer);
      const api = await app().tenant();
      const form = await api.newForm("Contact");
      const webhook = await api.newWebhook(form.id, { url: receiver.url, ...hook });
      return { receiver, api, form, webhook };
    },
    /** A JSON submission, accepted: its id. */
    async submit(formId: string, fields: object, headers: Record<string, string> = {}) {
      const res = await post(app().app, formId, {
        body: JSON.stringify(fields),
        contentType: "application/json",
        headers,
      });
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    },
    deliveriesOf,
    /** The webhook's newest delivery once `done` says so. */
    deliveryWhen(api: Api, formId: string, webhookId: string, done: (d: Body) => boolean) {
      return waitFor(async () => {
        const [delivery] = (await deliveriesOf(api, formId, webhookId)).data;
        return delivery && done(delivery) ? delivery : null;
      });
    },
  };
}
