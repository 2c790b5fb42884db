import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { useTestApp } from "../helpers.ts";
import {
  FORMS,
  SECRET,
  storedWebhooks,
  TIMESTAMP,
  tenantApiOf,
  unprocessable,
  withoutSecret,
} from "./webhook-fixtures.ts";

const testApp = useTestApp();

const tenantApi = () => tenantApiOf(testApp.app);

describe("webhooks: create, read, list", () => {
  test("create with defaults answers 201 with the record and its secret, stored as answered", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const before = Date.now();
    const res = await api.call("POST", api.webhooksUrl(form.id), {
      url: "https://hooks.example.com/in",
    });
    assert.equal(res.status, 201);
    const { id, secret, createdAt, updatedAt } = res.body;
    assert.match(id, /^wh_[A-Za-z0-9_-]{22}$/);
    assert.match(secret, SECRET);
    assert.equal(Buffer.from(secret.slice(6), "base64").length, 32);
    assert.match(createdAt, TIMESTAMP);
    assert.ok(Date.parse(createdAt) >= before - 1);
    assert.deepEqual(res.body, {
      id,
      formId: form.id,
      url: "https://hooks.example.com/in",
      description: "",
      events: ["submission.created"],
      enabled: true,
      createdAt,
      updatedAt: createdAt,
      secret,
    });
    assert.equal(updatedAt, createdAt);
    const read = await api.read.call("GET", `${api.webhooksUrl(form.id)}/${id}`);
    assert.deepEqual(read, { status: 200, body: withoutSecret(res.body) });
    assert.deepEqual(await storedWebhooks(form.id), [
      {
        url: "https://hooks.example.com/in",
        description: "",
        events: ["submission.created"],
        enabled: true,
        secret,
        previousSecret: null,
        previousSecretExpiresAt: null,
      },
    ]);
  });

  test("create with every member; the list is newest first, a page at a time", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const first = await api.newWebhook(form.id, {
      url: "http://crm.example.com/a",
      description: "CRM",
      events: ["submission.spam", "submission.created"],
      enabled: false,
    });
    assert.deepEqual(withoutSecret(first), {
      id: first.id,
      formId: form.id,
      url: "http://crm.example.com/a",
      description: "CRM",
      events: ["submission.spam", "submission.created"],
      enabled: false,
      createdAt: first.createdAt,
      updatedAt: first.createdAt,
    });
    const second = await api.newWebhook(form.id, { url: "https://b.example.com" });
    const third = await api.newWebhook(form.id, { url: "https://c.example.com" });
    const all = await api.read.call("GET", api.webhooksUrl(form.id));
    assert.deepEqual(all, {
      status: 200,
      body: {
        data: [third, second, first].map(withoutSecret),
        meta: { total: 3 },
        pagination: { totalPages: 1, currentPage: 1, nextPage: null, previousPage: null },
      },
    });
    const page = await api.read.call("GET", `${api.webhooksUrl(form.id)}?page=2&pageSize=2`);
    assert.deepEqual(page.body, {
      data: [withoutSecret(first)],
      meta: { total: 3 },
      pagination: { totalPages: 2, currentPage: 2, nextPage: null, previousPage: 1 },
    });
  });

  test("the 11th webhook of a form is refused, and not stored", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    for (let i = 0; i < 10; i++) await api.newWebhook(form.id, { url: `https://e.example/${i}` });
    const res = await api.call("POST", api.webhooksUrl(form.id), { url: "https://e.example/10" });
    assert.deepEqual(res, { status: 422, body: unprocessable("webhooks: at most 10 per form") });
    assert.equal((await storedWebhooks(form.id)).length, 10);
    // Another form has its own ten.
    const other = await api.newForm();
    await api.newWebhook(other.id, { url: "https://e.example/other" });
  });

  test("another organization's form or webhook, or a missing one: 404, and nothing changes", async () => {
    const api = await tenantApi();
    const theirs = await tenantApi();
    const form = await theirs.newForm();
    const webhook = await theirs.newWebhook(form.id, { url: "https://theirs.example" });
    const formGone = { error: { code: "not_found", message: "form: not found" } };
    const base = `${FORMS}/${form.id}/webhooks`;
    const calls: [string, string, object?][] = [
      ["GET", base],
      ["POST", base, { url: "https://mine.example" }],
      ["GET", `${base}/${webhook.id}`],
      ["PATCH", `${base}/${webhook.id}`, { enabled: false }],
      ["DELETE", `${base}/${webhook.id}`],
      ["POST", `${base}/${webhook.id}/rotate-secret`],
      ["GET", `${base}/${webhook.id}/deliveries`],
      ["POST", `${base}/${webhook.id}/test`],
    ];
    const before = await storedWebhooks(form.id);
    for (const [method, url, body] of calls) {
      const res = await api.call(method as "GET", url, body);
      assert.deepEqual(res, { status: 404, body: formGone }, `${method} ${url}`);
    }
    assert.deepEqual(await storedWebhooks(form.id), before);
    const own = await api.newForm();
    const missing = { error: { code: "not_found", message: "webhook: not found" } };
    for (const id of [webhook.id, "wh_AAAAAAAAAAAAAAAAAAAAAA", "nonsense"]) {
      const res = await api.call("GET", `${FORMS}/${own.id}/webhooks/${id}`);
      assert.deepEqual(res, { status: 404, body: missing });
    }
  });
});

describe("webhooks: update, delete, rotate", () => {
  test("update changes only the members sent", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const created = await api.newWebhook(form.id, { url: "https://a.example", description: "A" });
    const url = `${api.webhooksUrl(form.id)}/${created.id}`;
    const res = await api.call("PATCH", url, { events: ["submission.spam"], enabled: false });
    assert.equal(res.status, 200);
    assert.ok(res.body.updatedAt > created.updatedAt);
    assert.deepEqual(res.body, {
      ...withoutSecret(created),
      events: ["submission.spam"],
      enabled: false,
      updatedAt: res.body.updatedAt,
    });
    assert.deepEqual((await api.call("GET", url)).body, res.body);
    const stored = await storedWebhooks(form.id);
    assert.equal(stored[0]?.secret, created.secret);
  });

  test("delete answers 204; the webhook is gone", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const created = await api.newWebhook(form.id, { url: "https://a.example" });
    const url = `${api.webhooksUrl(form.id)}/${created.id}`;
    assert.deepEqual(await api.call("DELETE", url), { status: 204, body: {} });
    const gone = { error: { code: "not_found", message: "webhook: not found" } };
    assert.deepEqual(await api.call("GET", url), { status: 404, body: gone });
    assert.deepEqual(await api.call("DELETE", url), { status: 404, body: gone });
    assert.deepEqual(await storedWebhooks(form.id), []);
  });

  test("rotate answers a new secret; the previous one signs for 24 h; never more than two", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const created = await api.newWebhook(form.id, { url: "https://a.example" });
    const url = `${api.webhooksUrl(form.id)}/${created.id}/rotate-secret`;
    const before = Date.now();
    const first = await api.call("POST", url);
    assert.equal(first.status, 200);
    assert.match(first.body.secret, SECRET);
    assert.notEqual(first.body.secret, created.secret);
    assert.deepEqual(first.body, {
      ...withoutSecret(created),
      updatedAt: first.body.updatedAt,
      secret: first.body.secret,
    });
    let [stored] = await storedWebhooks(form.id);
    assert.equal(stored?.secret, first.body.secret);
    assert.equal(stored?.previousSecret, created.secret);
    const expires = new Date(stored?.previousSecretExpiresAt as Date).getTime();
    assert.ok(expires >= before + 86_400_000 && expires <= Date.now() + 86_400_000);
    const second = await api.call("POST", url);
    [stored] = await storedWebhooks(form.id);
    assert.equal(stored?.secret, second.body.secret);
    assert.equal(stored?.previousSecret, first.body.secret);
    const read = await api.call("GET", `${api.webhooksUrl(form.id)}/${created.id}`);
    assert.equal(read.body.secret, undefined);
  });
});

describe("the form's webhookEnabled and webhookUrl", () => {
  test("follow the form's enabled webhooks: the oldest one's URL, else empty", async () => {
    const api = await tenantApi();
    const form = await api.newForm();
    const formUrl = `${FORMS}/${form.id}`;
    const summary = async () => {
      const { webhookEnabled, webhookUrl, updatedAt } = (await api.call("GET", formUrl)).body;
      return { webhookEnabled, webhookUrl, updatedAt };
    };
    const none = { webhookEnabled: false, webhookUrl: "", updatedAt: form.updatedAt };
    assert.deepEqual(await summary(), none);
    const off = await api.newWebhook(form.id, { url: "https://off.example", enabled: false });
    assert.deepEqual(await summary(), none);
    const a = await api.newWebhook(form.id, { url: "https://a.example" });
    const b = await api.newWebhook(form.id, { url: "https://b.example" });
    const on = (webhookUrl: string) => ({
      webhookEnabled: true,
      webhookUrl,
      updatedAt: form.updatedAt,
    });
    assert.deepEqual(await summary(), on("https://a.example"));
    await api.call("PATCH", `${api.webhooksUrl(form.id)}/${off.id}`, { enabled: true });
    assert.deepEqual(await summary(), on("https://off.example"));
    await api.call("PATCH", `${api.webhooksUrl(form.id)}/${off.id}`, { url: "https://c.example" });
    assert.deepEqual(await summary(), on("https://c.example"));
    await api.call("DELETE", `${api.webhooksUrl(form.id)}/${off.id}`);
    assert.deepEqual(await summary(), on("https://a.example"));
    await api.call("PATCH", `${api.webhooksUrl(form.id)}/${a.id}`, { enabled: false });
    assert.deepEqual(await summary(), on("https://b.example"));
    await api.call("DELETE", `${api.webhooksUrl(form.id)}/${b.id}`);
    assert.deepEqual(await summary(), none);
    // Updating the form keeps them; they cannot be written.
    await api.newWebhook(form.id, { url: "https://d.example" });
    const updated = await api.call("PATCH", formUrl, { name: "renamed", isClosed: true });
    assert.equal(updated.body.webhookEnabled, true);
    assert.equal(updated.body.webhookUrl, "https://d.example");
    const refused = await api.call("PATCH", formUrl, { webhookEnabled: false });
    assert.deepEqual(refused.body, unprocessable("webhookEnabled: is read-only"));
  });
});
