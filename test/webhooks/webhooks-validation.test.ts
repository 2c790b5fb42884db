import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildTestApp, createTenant, useTestApp } from "../helpers.ts";
import { apiOf, storedWebhooks, tenantApiOf, unprocessable } from "./webhook-fixtures.ts";

const testApp = useTestApp();

const tenantApi = () => tenantApiOf(testApp.app);

describe("webhooks: validation", () => {
  test("each invalid member is refused by name, and nothing is stored", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const cases: [object, string][] = [
      [{}, "url: is required"],
      [{ url: "" }, "url: must not be empty"],
      [{ url: "ftp://files.example.com/x" }, "url: must be an absolute http or https URL"],
      [{ url: "hooks.example.com" }, "url: must be an absolute http or https URL"],
      [{ url: 5 }, "url: must be a string"],
      [{ url: "https://a.example", secret: "whsec_mine" }, "secret: is not allowed"],
      [{ url: "https://a.example", id: "wh_x" }, "id: is read-only"],
      [{ url: "https://a.example", formId: "x" }, "formId: is not allowed"],
      [{ url: "https://a.example", events: [] }, "events: must not be empty"],
      [
        { url: "https://a.example", events: ["submission.deleted"] },
        "events[0]: must be one of submission.created, submission.spam",
      ],
      [
        { url: "https://a.example", events: ["submission.spam", "submission.spam"] },
        "events: must not repeat an item",
      ],
      [{ url: "https://a.example", events: "submission.created" }, "events: must be an array"],
      [{ url: "https://a.example", enabled: "true" }, "enabled: must be a boolean"],
      [{ url: "https://a.example", description: 7 }, "description: must be a string"],
      [
        { url: "https://a.example", description: "a\nb" },
        "description: must not contain line breaks or control characters",
      ],
    ];
    for (const [body, message] of cases) {
      const res = await api.call("POST", api.webhooksUrl(form.id), body);
      assert.deepEqual(res, { status: 422, body: unprocessable(message) }, JSON.stringify(body));
    }
    assert.deepEqual(await storedWebhooks(form.id), []);
    const webhook = await api.newWebhook(form.id, { url: "https://a.example" });
    const stored = await storedWebhooks(form.id);
    for (const [body, message] of cases.slice(2)) {
      const res = await api.call("PATCH", `${api.webhooksUrl(form.id)}/${webhook.id}`, body);
      assert.deepEqual(res, { status: 422, body: unprocessable(message) }, JSON.stringify(body));
    }
    assert.deepEqual(await storedWebhooks(form.id), stored);
  });

  test("an IP literal that is not public, in any notation, is refused at create and update", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const webhook = await api.newWebhook(form.id, { url: "https://public.example.com" });
    const cases: [string, string][] = [
      ["http://127.0.0.1/hook", "127.0.0.1"],
      ["http://127.1/hook", "127.0.0.1"],
      ["http://0x7f000001/hook", "127.0.0.1"],
      ["http://2130706433/hook", "127.0.0.1"],
      ["http://0177.0.0.1/hook", "127.0.0.1"],
      ["http://[::ffff:127.0.0.1]/hook", "::ffff:7f00:1"],
      ["http://[::1]:8080/hook", "::1"],
      ["http://169.254.169.254/latest/meta-data", "169.254.169.254"],
      ["http://100.64.0.1/", "100.64.0.1"],
      ["https://[fd00::1]/", "fd00::1"],
      ["http://10.1.2.3/", "10.1.2.3"],
      ["http://192.168.0.10/", "192.168.0.10"],
      ["http://0.0.0.0/", "0.0.0.0"],
      ["http://224.0.0.1/", "224.0.0.1"],
      ["http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"],
      ["http://[2002:7f00:1::]/", "2002:7f00:1::"],
    ];
    for (const [url, address] of cases) {
      const expected = { status: 422, body: unprocessable(`url: address not allowed: ${address}`) };
      assert.deepEqual(await api.call("POST", api.webhooksUrl(form.id), { url }), expected, url);
      const patch = await api.call("PATCH", `${api.webhooksUrl(form.id)}/${webhook.id}`, { url });
      assert.deepEqual(patch, expected, url);
    }
    assert.equal((await storedWebhooks(form.id)).length, 1);
    // Public addresses and host names (checked when resolved, at each attempt) are accepted.
    for (const url of [
      "http://93.184.215.14/",
      "https://[2606:4700::1111]/",
      "http://localhost/",
    ]) {
      await api.newWebhook(form.id, { url });
    }
  });

  test("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts private addresses", async () => {
    const open = await buildTestApp({ webhookAllowPrivateNetworks: true });
    try {
      const tenant = await createTenant();
      const api = apiOf(open.app, tenant.fullKey);
      const form = await api.newForm();
      const created = await api.newWebhook(form.id, { url: "http://127.0.0.1:9/hook" });
      assert.equal(created.url, "http://127.0.0.1:9/hook");
    } finally {
      await open.close();
    }
  });
});
