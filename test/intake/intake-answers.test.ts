import assert from "node:assert/strict";
import { test } from "node:test";
import { useTestApp } from "../helpers.ts";
import {
  BROWSER_ACCEPT,
  countOf,
  JSON_TYPE,
  newForm,
  post,
  storedSubmissions,
} from "./intake-fixtures.ts";

const built = useTestApp();

const browser = { accept: BROWSER_ACCEPT };

test("Accept preferring text/html: 303 to the thank-you page; */*, JSON or none: 201 JSON", async () => {
  const { id } = await newForm(built.app);
  const html = await post(built.app, id, { body: "a=1", headers: browser });
  assert.equal(html.status, 303);
  assert.equal(html.headers.location, `/f/${id}/thanks`);
  assert.equal(html.text, "");
  for (const accept of ["*/*", "application/json", "application/json, text/html", undefined]) {
    const res = await post(built.app, id, {
      body: "a=1",
      headers: accept ? { accept } : {},
    });
    assert.equal(res.status, 201, String(accept));
  }
  assert.equal((await storedSubmissions(built.db, id)).length, 5);
});

test("the custom redirect is used only when it is on and the organization is paid", async () => {
  const redirect = { useCustomRedirect: true, customSuccessUrl: "https://example.com/thanks?a=1" };
  const paid = await newForm(built.app, redirect, "paid");
  const res = await post(built.app, paid.id, { body: "a=1", headers: browser });
  assert.equal(res.status, 303);
  assert.equal(res.headers.location, "https://example.com/thanks?a=1");
  // A paid form whose organization later became free falls back to the thank-you page.
  await built.db.query("UPDATE organizations SET plan = 'free' WHERE id = $1", [
    paid.organizationId,
  ]);
  const free = await post(built.app, paid.id, { body: "a=1", headers: browser });
  assert.equal(free.headers.location, `/f/${paid.id}/thanks`);
  // A URL in the request is never followed.
  const query = await post(built.app, `${paid.id}?redirect=https://evil.test`, {
    body: "_next=https://evil.test&a=1",
    headers: browser,
  });
  assert.equal(query.headers.location, `/f/${paid.id}/thanks`);
});

test("the default thank-you page; the custom one with every owner value escaped as text", async () => {
  const { id } = await newForm(built.app);
  const plain = await built.app.inject({ url: `/f/${id}/thanks` });
  assert.equal(plain.statusCode, 200);
  assert.match(String(plain.headers["content-type"]), /^text\/html; charset=utf-8/);
  assert.match(String(plain.headers["content-security-policy"]), /default-src 'none'/);
  assert.equal(plain.headers["x-content-type-options"], "nosniff");
  assert.match(plain.body, /<h1>Thank you!<\/h1>/);
  const custom = await newForm(built.app, {
    useCustomThankYouPage: true,
    tpHeader: "<script>alert(1)</script>",
    tpMessage: 'Thanks "friend" & <b>co</b>',
    tpButtonText: "Back <home>",
    tpButtonUrl: 'https://example.com/?a=1&b="x"',
    tpBackgroundColor: "#abc",
    tpTextColor: "#123456",
  });
  const page = await built.app.inject({ url: `/f/${custom.id}/thanks` });
  assert.equal(page.statusCode, 200);
  assert.ok(!page.body.includes("<script>"), page.body);
  assert.ok(!page.body.includes("<b>"));
  assert.match(page.body, /<h1>&lt;script>alert\(1\)&lt;\/script><\/h1>/);
  assert.match(page.body, /<p>Thanks &quot;friend&quot; &amp; &lt;b>co&lt;\/b><\/p>/);
  assert.match(page.body, /href="https:\/\/example.com\/\?a=1&amp;b=&quot;x&quot;"/);
  assert.match(page.body, />Back &lt;home><\/a>/);
  assert.match(page.body, /--bg:#abc;--text:#123456/);
  const missing = await built.app.inject({
    url: "/f/form_AAAAAAAAAAAAAAAAAAAAAA/thanks",
    headers: browser,
  });
  assert.equal(missing.statusCode, 404);
  assert.match(missing.body, /<h1>Form not found<\/h1>/);
});

test("a javascript: button URL written into the store is never a link", async () => {
  const { id } = await newForm(built.app, { useCustomThankYouPage: true, tpButtonText: "Go" });
  await built.db.query(
    `UPDATE forms SET settings = settings || '{"tpButtonUrl": "javascript:alert(1)"}' WHERE id = $1`,
    [id],
  );
  const page = await built.app.inject({ url: `/f/${id}/thanks` });
  assert.ok(!page.body.includes("javascript:"));
  assert.ok(!page.body.includes('class="button"'), "no button without an http(s) URL");
});

test("HTML errors: a page with the same status; the closed form's own message when set", async () => {
  const closed = await newForm(built.app, {
    isClosed: true,
    showCustomClosedMessage: true,
    closeMessageTitle: "See you <next> year",
    closeMessageDescription: "Registrations & questions: closed",
  });
  const page = await post(built.app, closed.id, { body: "a=1", headers: browser });
  assert.equal(page.status, 403);
  assert.match(String(page.headers["content-type"]), /^text\/html/);
  assert.match(page.text, /<h1>See you &lt;next> year<\/h1>/);
  assert.match(page.text, /<p>Registrations &amp; questions: closed<\/p>/);
  const plain = await newForm(built.app, { isClosed: true });
  const res = await post(built.app, plain.id, { body: "a=1", headers: browser });
  assert.equal(res.status, 403);
  assert.match(res.text, /<h1>This form is closed<\/h1><p>form: is closed<\/p>/);
  const bad = await post(built.app, plain.id.replace("form_", "form_x"), {
    body: "a=1",
    headers: browser,
  });
  assert.equal(bad.status, 404);
  assert.match(bad.text, /<h1>Form not found<\/h1>/);
  const open = await newForm(built.app);
  const empty = await post(built.app, open.id, { body: "", headers: browser });
  assert.equal(empty.status, 422);
  assert.match(empty.text, /<p>body: is empty<\/p>/);
});

test("CORS: preflight and POST reflect an allowed Origin; none for another origin", async () => {
  const open = await newForm(built.app);
  const preflight = await built.app.inject({
    method: "OPTIONS",
    url: `/f/${open.id}`,
    headers: {
      origin: "https://site.test",
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type",
    },
  });
  assert.equal(preflight.statusCode, 204);
  assert.equal(preflight.headers["access-control-allow-origin"], "https://site.test");
  assert.equal(preflight.headers["access-control-allow-methods"], "POST");
  assert.match(String(preflight.headers["access-control-allow-headers"]), /Content-Type/);
  assert.equal(preflight.headers.vary, "Origin");

  const limited = await newForm(built.app, { allowedDomains: "site.test" });
  const cases: [string, string | undefined][] = [
    ["https://site.test", "https://site.test"],
    ["https://other.test", undefined],
  ];
  for (const [origin, allowed] of cases) {
    const pre = await built.app.inject({
      method: "OPTIONS",
      url: `/f/${limited.id}`,
      headers: { origin, "access-control-request-method": "POST" },
    });
    assert.equal(pre.headers["access-control-allow-origin"], allowed, origin);
    assert.equal(pre.headers["access-control-allow-methods"], allowed && "POST", origin);
    const res = await post(built.app, limited.id, {
      body: JSON.stringify({ a: 1 }),
      contentType: JSON_TYPE,
      headers: { origin },
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers["access-control-allow-origin"], allowed, origin);
  }
  const errorAnswer = await post(built.app, open.id, { headers: { origin: "https://site.test" } });
  assert.equal(errorAnswer.status, 422);
  assert.equal(errorAnswer.headers["access-control-allow-origin"], "https://site.test");
});

test("Idempotency-Key: one submission, the first answer replayed; another body is a 422", async () => {
  const { id } = await newForm(built.app, {
    providerCaptchaEnabled: true,
    providerCaptchaSecretKey: "k",
  });
  const request = {
    body: "a=1&cf-turnstile-response=pass",
    headers: { "idempotency-key": "retry-1" },
  };
  const first = await post(built.app, id, request);
  assert.equal(first.status, 201);
  const asked = built.captcha.checks.length;
  const again = await post(built.app, id, request);
  assert.deepEqual([again.status, again.text], [201, first.text]);
  assert.equal(again.headers["idempotent-replayed"], "true");
  assert.equal(built.captcha.checks.length, asked, "a replay does not spend the token again");
  const other = await post(built.app, id, {
    body: "a=2&cf-turnstile-response=pass",
    headers: { "idempotency-key": "retry-1" },
  });
  assert.deepEqual(other.body, {
    error: {
      code: "unprocessable_entity",
      message: "Idempotency-Key: was already used with a different request body",
    },
  });
  // Keys belong to their form: the same key on another form is another submission.
  const { id: second } = await newForm(built.app);
  const elsewhere = await post(built.app, second, { body: "a=1", headers: request.headers });
  assert.equal(elsewhere.status, 201);
  assert.notEqual(elsewhere.body.id, first.body.id);
  assert.deepEqual(
    (await storedSubmissions(built.db, id)).map((s) => s.id),
    [first.body.id],
  );
  assert.equal(await countOf(built.db, id), 1);
});

test("Idempotency-Key: concurrent retries store one submission", async () => {
  const { id } = await newForm(built.app);
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      post(built.app, id, { body: "a=1", headers: { "idempotency-key": "same" } }),
    ),
  );
  assert.deepEqual(new Set(answers.map((a) => a.text)).size, 1);
  assert.equal((await storedSubmissions(built.db, id)).length, 1);
  assert.equal(await countOf(built.db, id), 1);
});
