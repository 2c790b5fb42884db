import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { post } from "../intake/intake-fixtures.ts";
import { type DeliveryApp, startDeliveryApp, waitFor } from "./delivery-harness.ts";
import { startReceiver } from "./receiver.ts";
import { FORMS } from "./webhook-fixtures.ts";

// Private addresses refused, as in production; waits of 1 s, so a test can act between attempts.
let harness: DeliveryApp;
before(async () => {
  harness = await startDeliveryApp({ allowPrivateNetworks: false, retryDelaysSeconds: [1, 1] });
});
after(() => harness?.close());

async function deliveriesOf(api: Awaited<ReturnType<DeliveryApp["tenant"]>>, base: string) {
  return (await api.call("GET", `${base}/deliveries`)).body.data;
}

test("a host name resolving to a private address: failed attempts, retried, nothing sent", async () => {
  const receiver = await startReceiver();
  const api = await harness.tenant();
  const form = await api.newForm();
  // Accepted at create: host names are checked when resolved, at every attempt.
  const webhook = await api.newWebhook(form.id, {
    url: `http://receiver.test:${receiver.port}/hook`,
  });
  const base = `${FORMS}/${form.id}/webhooks/${webhook.id}`;
  const res = await post(harness.app, form.id, {
    body: JSON.stringify({ message: "to a private address" }),
    contentType: "application/json",
  });
  assert.equal(res.status, 201);
  const delivery = await waitFor(async () => {
    const [found] = await deliveriesOf(api, base);
    return found?.status === "failed" ? found : null;
  });
  assert.equal(delivery.attempts.length, 3);
  for (const attempt of delivery.attempts) {
    assert.deepEqual(
      { statusCode: attempt.statusCode, error: attempt.error, responseBody: attempt.responseBody },
      { statusCode: null, error: "address not allowed: 127.0.0.1", responseBody: null },
    );
  }
  assert.equal(receiver.received.length, 0);
  await receiver.close();
});

test("disabling a webhook stops its pending deliveries at their next attempt", async () => {
  const api = await harness.tenant();
  const form = await api.newForm();
  const webhook = await api.newWebhook(form.id, { url: "http://receiver.test:9/hook" });
  const base = `${FORMS}/${form.id}/webhooks/${webhook.id}`;
  await post(harness.app, form.id, { body: "a=1" });
  const pending = await waitFor(async () => {
    const [found] = await deliveriesOf(api, base);
    return found?.attempts.length === 1 ? found : null;
  });
  assert.equal(pending.status, "pending");
  assert.ok(Date.parse(pending.nextAttemptAt) > Date.parse(pending.attempts[0].at));
  assert.equal((await api.call("PATCH", base, { enabled: false })).status, 200);
  await post(harness.app, form.id, { body: "a=2" });
  const stopped = await waitFor(async () => {
    const [found] = await deliveriesOf(api, base);
    return found?.status === "failed" ? found : null;
  });
  assert.deepEqual(stopped, { ...pending, status: "failed", nextAttemptAt: null });
  // No delivery for the submission made while it was disabled.
  assert.equal((await deliveriesOf(api, base)).length, 1);
});
