import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import type { Body } from "../forms/form-fixtures.ts";
import { type DeliveryApp, startDeliveryApp } from "./delivery-harness.ts";
import { deliveryTools } from "./delivery-tools.ts";
import { FORMS } from "./webhook-fixtures.ts";

// Waits of 0 s then 1 s: three attempts in all, quickly, one wait long enough to measure.
let harness: DeliveryApp;
before(async () => {
  harness = await startDeliveryApp({ allowPrivateNetworks: true, retryDelaysSeconds: [0, 1] });
});
after(() => harness?.close());

const { setUp, submit, deliveriesOf, deliveryWhen } = deliveryTools(() => harness);

describe("attempts and retries", () => {
  test("failed attempts are retried on the schedule with the same webhook-id, then failed", async () => {
    const {
      receiver: r,
      api,
      form,
      webhook,
    } = await setUp((res) => res.writeHead(500).end("down"));
    await submit(form.id, { message: "retry me" });
    const delivery = await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "failed");
    assert.equal(delivery.attempts.length, 3);
    assert.equal(delivery.nextAttemptAt, null);
    for (const attempt of delivery.attempts) {
      assert.deepEqual(
        {
          statusCode: attempt.statusCode,
          error: attempt.error,
          responseBody: attempt.responseBody,
        },
        { statusCode: 500, error: "the receiver answered 500", responseBody: "down" },
      );
    }
    // The schedule's second step (1 s) counts from the end of the second attempt.
    const [, second, third] = delivery.attempts;
    const secondEnd = Date.parse(second.at) + second.durationMs;
    assert.ok(Date.parse(third.at) - secondEnd >= 1_000 - 5, JSON.stringify(delivery.attempts));
    assert.equal(r.received.length, 3);
    const ids = new Set(r.received.map((got) => got.headers["webhook-id"]));
    assert.deepEqual([...ids], [delivery.eventId]);
    for (const got of r.received) {
      new Webhook(webhook.secret).verify(got.body, got.headers as Record<string, string>);
      assert.equal(got.body, r.received[0]?.body);
    }
    await r.close();
  });

  test("a 429 with Retry-After waits the longer of it and the step", async () => {
    const {
      receiver: r,
      api,
      form,
      webhook,
    } = await setUp((res, index) =>
      index === 0 ? res.writeHead(429, { "retry-after": "2" }).end() : res.writeHead(200).end("ok"),
    );
    await submit(form.id, { message: "later" });
    const delivery = await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "succeeded");
    const [first, second] = delivery.attempts;
    assert.equal(first.statusCode, 429);
    assert.equal(second.statusCode, 200);
    const firstEnd = Date.parse(first.at) + first.durationMs;
    assert.ok(Date.parse(second.at) - firstEnd >= 2_000 - 5);
    await r.close();
  });

  test("410 fails the delivery and disables the webhook; no new events reach it", async () => {
    const { receiver: r, api, form, webhook } = await setUp((res) => res.writeHead(410).end());
    await submit(form.id, { message: "gone" });
    const delivery = await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "failed");
    assert.equal(delivery.attempts.length, 1);
    assert.equal(delivery.attempts[0].statusCode, 410);
    assert.equal(delivery.nextAttemptAt, null);
    const read = await api.call("GET", `${FORMS}/${form.id}/webhooks/${webhook.id}`);
    assert.equal(read.body.enabled, false);
    const formRead = await api.call("GET", `${FORMS}/${form.id}`);
    assert.deepEqual([formRead.body.webhookEnabled, formRead.body.webhookUrl], [false, ""]);
    await submit(form.id, { message: "after" });
    assert.equal((await deliveriesOf(api, form.id, webhook.id)).meta.total, 1);
    await r.close();
  });
});

describe("test events and redelivery", () => {
  test("a test event goes to this webhook alone, whatever its events", async () => {
    const {
      receiver: r,
      api,
      form,
      webhook,
    } = await setUp(undefined, {
      events: ["submission.spam"],
    });
    const other = await api.newWebhook(form.id, { url: r.url });
    const res = await api.call("POST", `${FORMS}/${form.id}/webhooks/${webhook.id}/test`);
    assert.equal(res.status, 202);
    assert.match(res.body.id, /^dlv_/);
    assert.deepEqual(res.body, {
      id: res.body.id,
      eventId: res.body.eventId,
      event: "webhook.test",
      status: "pending",
      attempts: [],
      nextAttemptAt: res.body.createdAt,
      createdAt: res.body.createdAt,
    });
    const got = await r.next(0);
    assert.deepEqual(
      new Webhook(webhook.secret).verify(got.body, got.headers as Record<string, string>),
      {
        type: "webhook.test",
        timestamp: res.body.createdAt,
        data: { form: { id: form.id, name: "Contact" } },
      },
    );
    assert.equal(got.headers["webhook-id"], res.body.eventId);
    await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "succeeded");
    assert.equal((await deliveriesOf(api, form.id, other.id)).meta.total, 0);
    await r.close();
  });

  test("redelivery appends an attempt with the same body and webhook-id, in any state", async () => {
    const {
      receiver: r,
      api,
      form,
      webhook,
    } = await setUp((res, index) =>
      index === 0 ? res.writeHead(400).end() : res.writeHead(200).end("ok"),
    );
    await api.call("PATCH", `${FORMS}/${form.id}/webhooks/${webhook.id}`, {
      events: ["submission.created"],
    });
    await submit(form.id, { message: "again" });
    const first = await deliveryWhen(api, form.id, webhook.id, (d) => d.attempts.length === 2);
    assert.equal(first.status, "succeeded");
    const url = `${FORMS}/${form.id}/webhooks/${webhook.id}/deliveries/${first.id}/redeliver`;
    const res = await api.call("POST", url);
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, {
      ...first,
      status: "pending",
      nextAttemptAt: res.body.nextAttemptAt,
    });
    const done = await deliveryWhen(api, form.id, webhook.id, (d) => d.attempts.length === 3);
    assert.equal(done.status, "succeeded");
    assert.equal(done.nextAttemptAt, null);
    assert.equal(r.received.length, 3);
    assert.equal(r.received[2]?.headers["webhook-id"], first.eventId);
    assert.equal(r.received[2]?.body, r.received[0]?.body);
    const missing = await api.call(
      "POST",
      `${FORMS}/${form.id}/webhooks/${webhook.id}/deliveries/dlv_AAAAAAAAAAAAAAAAAAAAAA/redeliver`,
    );
    assert.deepEqual(missing, {
      status: 404,
      body: { error: { code: "not_found", message: "delivery: not found" } },
    });
    await r.close();
  });

  test("a failed delivery redelivered succeeds", async () => {
    const {
      receiver: r,
      api,
      form,
      webhook,
    } = await setUp((res, index) => res.writeHead(index < 3 ? 502 : 200).end());
    await submit(form.id, { message: "late" });
    const failed = await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "failed");
    assert.equal(failed.attempts.length, 3);
    const url = `${FORMS}/${form.id}/webhooks/${webhook.id}/deliveries/${failed.id}/redeliver`;
    assert.equal((await api.call("POST", url)).status, 202);
    const done = await deliveryWhen(api, form.id, webhook.id, (d) => d.attempts.length === 4);
    assert.equal(done.status, "succeeded");
    assert.equal(done.attempts[3].statusCode, 200);
    assert.equal(r.received[3]?.headers["webhook-id"], failed.eventId);
    await r.close();
  });

  test("after a rotation both secrets sign, the new one first", async () => {
    const { receiver: r, api, form, webhook } = await setUp();
    const rotated = await api.call(
      "POST",
      `${FORMS}/${form.id}/webhooks/${webhook.id}/rotate-secret`,
    );
    await api.call("POST", `${FORMS}/${form.id}/webhooks/${webhook.id}/test`);
    const got = await r.next(0);
    const headers = got.headers as Record<string, string>;
    const [newest, oldest] = String(headers["webhook-signature"]).split(" ");
    const at = new Date(Number(headers["webhook-timestamp"]) * 1000);
    const id = headers["webhook-id"] as string;
    assert.equal(newest, new Webhook(rotated.body.secret).sign(id, at, got.body));
    assert.equal(oldest, new Webhook(webhook.secret).sign(id, at, got.body));
    new Webhook(webhook.secret).verify(got.body, headers);
    new Webhook(rotated.body.secret).verify(got.body, headers);
    await r.close();
  });

  test("the deliveries list pages newest first and filters by status", async () => {
    const {
      receiver: r,
      api,
      form,
      webhook,
    } = await setUp((res, index) => res.writeHead(index === 0 ? 410 : 200).end());
    const base = `${FORMS}/${form.id}/webhooks/${webhook.id}`;
    const first = (await api.call("POST", `${base}/test`)).body;
    await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "failed");
    await api.call("PATCH", base, { enabled: true });
    const second = (await api.call("POST", `${base}/test`)).body;
    await deliveryWhen(api, form.id, webhook.id, (d) => d.status === "succeeded");
    const all = await deliveriesOf(api, form.id, webhook.id, "?pageSize=1");
    assert.deepEqual(
      all.data.map((d: Body) => d.id),
      [second.id],
    );
    assert.deepEqual(all.meta, { total: 2 });
    assert.deepEqual(all.pagination, {
      totalPages: 2,
      currentPage: 1,
      nextPage: 2,
      previousPage: null,
    });
    const failed = await deliveriesOf(api, form.id, webhook.id, "?status=failed");
    assert.deepEqual(
      failed.data.map((d: Body) => d.id),
      [first.id],
    );
    const pending = await deliveriesOf(api, form.id, webhook.id, "?status=pending");
    assert.deepEqual(pending.meta, { total: 0 });
    const wrong = await api.call("GET", `${base}/deliveries?status=lost`);
    assert.deepEqual(wrong.body, {
      error: {
        code: "unprocessable_entity",
        message: "status: must be one of pending, succeeded, failed",
      },
    });
    await r.close();
  });
});
