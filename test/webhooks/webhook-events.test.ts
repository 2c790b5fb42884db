import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { type DeliveryApp, startDeliveryApp, waitFor } from "./delivery-harness.ts";
import { deliveryTools } from "./delivery-tools.ts";
import type { Receiver } from "./receiver.ts";
import { FORMS, TIMESTAMP } from "./webhook-fixtures.ts";

let harness: DeliveryApp;
before(async () => {
  harness = await startDeliveryApp({ allowPrivateNetworks: true, retryDelaysSeconds: [0, 1] });
});
after(() => harness?.close());

const { setUp, submit, deliveriesOf } = deliveryTools(() => harness);

describe("events from the intake", () => {
  let receiver: Receiver;
  after(() => receiver?.close());

  test("an accepted submission: one signed submission.created with the API's record", async () => {
    const setup = await setUp();
    receiver = setup.receiver;
    const { api, form, webhook } = setup;
    const id = await submit(form.id, { email: "ada@example.com", message: "Hello" });
    const got = await receiver.next(0);
    const record = (await api.call("GET", `${FORMS}/${form.id}/submissions/${id}`)).body;
    const payload = new Webhook(webhook.secret).verify(
      got.body,
      got.headers as Record<string, string>,
    );
    assert.deepEqual(payload, {
      type: "submission.created",
      timestamp: record.createdAt,
      data: { form: { id: form.id, name: "Contact" }, submission: record },
    });
    assert.match(String(got.headers["webhook-id"]), /^msg_[A-Za-z0-9_-]{22}$/);
    const deliveries = await waitFor(async () => {
      const list = await api.call("GET", `${FORMS}/${form.id}/webhooks/${webhook.id}/deliveries`);
      return list.body.data[0]?.status === "succeeded" ? list.body : null;
    });
    const [delivery] = deliveries.data;
    assert.match(delivery.attempts[0].at, TIMESTAMP);
    assert.equal(typeof delivery.attempts[0].durationMs, "number");
    assert.deepEqual(deliveries, {
      data: [
        {
          id: delivery.id,
          eventId: got.headers["webhook-id"],
          event: "submission.created",
          status: "succeeded",
          attempts: [
            {
              at: delivery.attempts[0].at,
              statusCode: 204,
              durationMs: delivery.attempts[0].durationMs,
              error: null,
              responseBody: "",
            },
          ],
          nextAttemptAt: null,
          createdAt: delivery.createdAt,
        },
      ],
      meta: { total: 1 },
      pagination: { totalPages: 1, currentPage: 1, nextPage: null, previousPage: null },
    });
  });

  test("spam is sent only to webhooks subscribed to submission.spam", async () => {
    const {
      receiver: spamReceiver,
      api,
      form,
      webhook,
    } = await setUp(undefined, {
      events: ["submission.spam"],
    });
    const plain = await api.newWebhook(form.id, { url: spamReceiver.url });
    const id = await submit(form.id, { email: "bot@example.com", _gotcha: "filled" });
    assert.equal((await deliveriesOf(api, form.id, plain.id)).meta.total, 0);
    const got = await spamReceiver.next(0);
    const record = (await api.call("GET", `${FORMS}/${form.id}/submissions/${id}`)).body;
    assert.equal(record.isSpam, true);
    assert.deepEqual(JSON.parse(got.body), {
      type: "submission.spam",
      timestamp: record.createdAt,
      data: { form: { id: form.id, name: "Contact" }, submission: record },
    });
    assert.equal((await deliveriesOf(api, form.id, webhook.id)).meta.total, 1);
    // An accepted submission is not sent to a webhook subscribed to spam alone.
    await submit(form.id, { email: "ada@example.com" });
    assert.equal((await deliveriesOf(api, form.id, webhook.id)).meta.total, 1);
    assert.equal((await deliveriesOf(api, form.id, plain.id)).meta.total, 1);
    await spamReceiver.close();
  });

  test("a disabled webhook gets nothing; marking spam later sends nothing", async () => {
    const { receiver: r, api, form, webhook } = await setUp();
    const off = await api.newWebhook(form.id, { url: r.url, enabled: false });
    const id = await submit(form.id, { message: "one" });
    await r.next(0);
    assert.equal((await deliveriesOf(api, form.id, off.id)).meta.total, 0);
    const marked = await api.call("PATCH", `${FORMS}/${form.id}/submissions/${id}`, {
      isSpam: true,
    });
    assert.equal(marked.status, 200);
    await api.call("PATCH", `${FORMS}/${form.id}/submissions/${id}`, { isSpam: false });
    assert.equal((await deliveriesOf(api, form.id, webhook.id)).meta.total, 1);
    await r.close();
  });

  test("a form that stores nothing still sends the record as it would have been", async () => {
    const { receiver: r, api, form } = await setUp();
    await api.call("PATCH", `${FORMS}/${form.id}`, { submissionStorageDuration: "never" });
    const id = await submit(form.id, { message: "kept nowhere" }, { "user-agent": "test/1" });
    const got = await r.next(0);
    const payload = JSON.parse(got.body);
    assert.equal((await api.call("GET", `${FORMS}/${form.id}/submissions/${id}`)).status, 404);
    const { submission } = payload.data;
    assert.deepEqual(submission, {
      id,
      formId: form.id,
      isSpam: false,
      spamReason: null,
      answers: [{ id: "message", label: "message", value: "kept nowhere" }],
      files: [],
      meta: { ip: "127.0.0.1", country: null, userAgent: "test/1", referrer: null },
      createdAt: submission.createdAt,
      updatedAt: submission.createdAt,
    });
    assert.equal(payload.timestamp, submission.createdAt);
    await r.close();
  });
});
