import assert from "node:assert/strict";
import { test } from "node:test";
import { buildTestApp, useTestApp } from "../helpers.ts";
import { BROWSER_ACCEPT, newForm, post, storedSubmissions } from "../intake/intake-fixtures.ts";
import { field, SAMPLE_FORM } from "./sample-form.ts";

const built = useTestApp();

const get = (url: string) => built.app.inject({ url, headers: { accept: BROWSER_ACCEPT } });
const tokenOf = (html: string) => /name="_token" value="([^"]+)"/.exec(html)?.[1];
const nonceOf = (csp: unknown) => /'nonce-([^']+)'/.exec(String(csp))?.[1];

test("the form page: every field with its control, labelled, groups in fieldsets, posting to the intake", async () => {
  const { id } = await newForm(built.app, SAMPLE_FORM);
  const page = await get(`/f/${id}`);
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers["content-type"]), /^text\/html; charset=utf-8/);
  const html = page.body;
  assert.match(html, new RegExp(`<form method="post" action="/f/${id}" class="fields"`));
  assert.ok(!html.includes("multipart/form-data"), "no file field: urlencoded");
  for (const [id, type] of [
    ["name", "text"],
    ["email", "email"],
    ["phone", "tel"],
    ["site", "url"],
    ["team", "number"],
    ["start", "date"],
  ]) {
    assert.match(html, new RegExp(`<label class="label" for="${id}">`), id);
    assert.match(html, new RegExp(`<input id="${id}" name="${id}"[^>]* type="${type}"`), id);
  }
  assert.match(html, /<textarea id="message" name="message"/);
  assert.match(
    html,
    /<select id="plan" name="plan"><option value>Choose…<\/option><option value="Starter">/,
  );
  for (const group of ["role", "topics", "stars", "likely"]) {
    assert.match(
      html,
      new RegExp(`<fieldset class="field" data-field="${group}"[^>]*><legend`),
      group,
    );
  }
  assert.match(html, /<input type="radio" name="role" value="Designer" id="role" required/);
  assert.match(html, /<input type="checkbox" name="topics" value="Forms"/);
  assert.equal(html.match(/name="stars"/g)?.length, 5);
  assert.equal(html.match(/name="likely"/g)?.length, 11, "a 0..10 scale");
  assert.match(
    html,
    /<h2>Almost done<\/h2><p class="hint" id="section-hint">Two quick questions.<\/p>/,
  );
  // Descriptions only with showDescription; steps at each page field.
  assert.match(html, /<p class="hint" id="email-hint">We reply within a day.<\/p>/);
  assert.equal(html.match(/<section class="step"/g)?.length, 3);
  assert.match(html, /<button type="submit" class="button submit">Send enquiry<\/button>/);
  assert.match(
    html,
    /<footer class="brand"><a href="\/" rel="noopener">Made with formdeck<\/a><\/footer>/,
  );
  assert.match(html, /<title>Project enquiry<\/title>/);
  assert.match(html, /<meta name="twitter:card" content="summary"\/>/);
  assert.match(html, /<h1>Start a project<\/h1>/);
});

test("every view has its own _token and nonce; the CSP allows nothing inline without it", async () => {
  const { id } = await newForm(built.app, SAMPLE_FORM);
  const [one, two] = [await get(`/f/${id}`), await get(`/f/${id}`)];
  const csp = String(one.headers["content-security-policy"]);
  assert.ok(tokenOf(one.body) && tokenOf(two.body) && tokenOf(one.body) !== tokenOf(two.body));
  const nonce = nonceOf(csp);
  assert.ok(nonce && nonce !== nonceOf(two.headers["content-security-policy"]));
  assert.equal(
    csp,
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'`,
  );
  assert.equal(one.body.match(new RegExp(`nonce="${nonce}"`, "g"))?.length, 2, "style and script");
  assert.ok(!one.body.includes('style="'), "no style attribute, which the policy would block");
  assert.equal(one.headers["cache-control"], "no-store");
  const script = await built.app.inject({ url: "/assets/form.js" });
  assert.equal(script.statusCode, 200);
  assert.match(String(script.headers["content-type"]), /^text\/javascript/);
  const rules = await built.app.inject({ url: "/assets/answer-rules.js" });
  assert.match(rules.body, /export function hiddenFieldIds\(fields *, submitted *\)/);
});

test("link previews, images, framing and the redirect's origin in the policy", async () => {
  const { id, api } = await newForm(
    built.app,
    {
      ...SAMPLE_FORM,
      headerImage: "https://images.example.com/cover.png",
      logo: "https://cdn.example.org/logo.svg",
      allowedDomains: "example.com, *.shop.example",
      useCustomRedirect: true,
      customSuccessUrl: "https://thanks.example.net/done",
      pageMode: "full",
      removeServiceBranding: true,
    },
    "paid",
  );
  await api.updateOk(id, {
    seoTitle: "Enquire today",
    seoDescription: "Tell us about your project",
    seoImage: "https://images.example.com/og.png",
  });
  const page = await get(`/f/${id}`);
  const csp = String(page.headers["content-security-policy"]);
  assert.match(csp, /img-src 'self' https:\/\/images\.example\.com https:\/\/cdn\.example\.org;/);
  assert.match(csp, /form-action 'self' https:\/\/thanks\.example\.net;/);
  assert.match(csp, /frame-ancestors 'self' https:\/\/example\.com https:\/\/\*\.shop\.example$/);
  const html = page.body;
  assert.match(html, /<title>Enquire today<\/title>/);
  assert.match(html, /<meta name="description" content="Tell us about your project"\/>/);
  assert.match(html, /<meta property="og:title" content="Enquire today"\/>/);
  assert.match(html, /<meta property="og:description" content="Tell us about your project"\/>/);
  assert.match(html, /<meta property="og:image" content="https:\/\/images.example.com\/og.png"\/>/);
  assert.match(html, /<meta name="twitter:card" content="summary_large_image"\/>/);
  assert.match(html, /<img class="cover" src="https:\/\/images.example.com\/cover.png" alt\/>/);
  assert.match(
    html,
    /<img class="logo" src="https:\/\/cdn.example.org\/logo.svg" alt="Project enquiry logo"\/>/,
  );
  assert.match(html, /<div class="page full">/);
  assert.ok(!html.includes("Made with formdeck"));
  assert.match(html, /"next":"https:\/\/thanks.example.net\/done"/);
});

test("nothing owner-only in the page", async () => {
  const { id } = await newForm(built.app, {
    ...SAMPLE_FORM,
    emailsToNotify: ["owner-secret@example.com"],
    ipBlacklist: "203.0.113.77",
    providerCaptchaSecretKey: "captcha-secret-value",
    respondentEmailSubject: "subject-only-for-owner",
  });
  const { body } = await get(`/f/${id}`);
  for (const secret of [
    "owner-secret",
    "203.0.113.77",
    "captcha-secret-value",
    "subject-only-for-owner",
    "emailsToNotify",
    "ipBlacklist",
  ]) {
    assert.ok(!body.includes(secret), secret);
  }
});

test("404 page for an endpoint, deleted or missing form; closed page without fields", async () => {
  const endpoint = await newForm(built.app, { name: "endpoint" });
  const deleted = await newForm(built.app, SAMPLE_FORM);
  const removed = await built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${deleted.id}`,
    headers: { "api-key": deleted.key },
  });
  assert.equal(removed.statusCode, 204);
  for (const path of [endpoint.id, deleted.id, "form_AAAAAAAAAAAAAAAAAAAAAA", "nope"]) {
    const page = await get(`/f/${path}`);
    assert.equal(page.statusCode, 404, path);
    assert.match(page.body, /<h1>Form not found<\/h1>/);
    assert.match(String(page.headers["content-type"]), /^text\/html/);
  }
  const closed = await newForm(built.app, { ...SAMPLE_FORM, isClosed: true });
  const plain = await get(`/f/${closed.id}`);
  assert.equal(plain.statusCode, 200);
  assert.match(plain.body, /<h1>This form is closed<\/h1>/);
  assert.ok(!plain.body.includes("<form") && !plain.body.includes("<input"));
  const custom = await newForm(built.app, {
    ...SAMPLE_FORM,
    limitResponses: true,
    maxResponses: 1,
    showCustomClosedMessage: true,
    closeMessageTitle: "Full up",
    closeMessageDescription: "See you next year",
  });
  assert.equal((await get(`/f/${custom.id}`)).statusCode, 200);
  assert.equal(
    (await post(built.app, custom.id, { body: "name=A&email=a%40b.co&role=Designer" })).status,
    201,
  );
  const full = await get(`/f/${custom.id}`);
  assert.match(full.body, /<h1>Full up<\/h1><p>See you next year<\/p>/);
  assert.ok(!full.body.includes("<input"));
});

test("a page is rendered again when its form changes; branding off, submit text, captcha notice", async () => {
  const { id, api } = await newForm(built.app, SAMPLE_FORM);
  assert.match((await get(`/f/${id}`)).body, /Send enquiry/);
  await api.updateOk(id, { name: "Renamed", providerCaptchaEnabled: true });
  const page = (await get(`/f/${id}`)).body;
  assert.match(page, /<title>Renamed<\/title>/);
  assert.ok(!page.includes('type="submit"'), "no submit button without a site key");
  assert.match(page, /<p class="notice" role="status">This form cannot take answers yet/);
});

test("the page's _token is the idempotency key: a double post stores one submission", async () => {
  const { id } = await newForm(built.app, {
    ...SAMPLE_FORM,
    fields: [field({ id: "name", subtype: "short_answer", label: "Name" })],
  });
  const token = tokenOf((await get(`/f/${id}`)).body);
  const body = `name=Ada&_token=${token}`;
  const first = await post(built.app, id, { body, headers: { accept: BROWSER_ACCEPT } });
  const again = await post(built.app, id, { body, headers: { accept: BROWSER_ACCEPT } });
  assert.equal(first.status, 303);
  assert.equal(again.status, 303);
  assert.equal(again.headers["idempotent-replayed"], "true");
  const stored = await storedSubmissions(built.db, id);
  assert.equal(stored.length, 1);
  assert.deepEqual(
    stored[0]?.answers.map((answer) => answer.id),
    ["name"],
    "the token is not an answer",
  );
  const other = tokenOf((await get(`/f/${id}`)).body);
  await post(built.app, id, { body: `name=Ada&_token=${other}` });
  assert.equal((await storedSubmissions(built.db, id)).length, 2, "a new view is a new submission");
});

test("a 20-field page weighs under 40 KB with its style sheet and scripts", async () => {
  const fields = Array.from({ length: 20 }, (_, i) =>
    field({
      id: `f${i}`,
      subtype: i % 4 === 0 ? "single_choice" : "short_answer",
      label: `Question number ${i + 1} of the form`,
      required: i % 3 === 0,
      showDescription: true,
      description: "A short description of what to answer here.",
      ...(i % 4 === 0 && {
        options: [
          { id: "a", value: "Yes" },
          { id: "b", value: "No" },
          { id: "c", value: "Maybe" },
        ],
      }),
    }),
  );
  const { id } = await newForm(built.app, { ...SAMPLE_FORM, fields });
  const page = await get(`/f/${id}`);
  const sizes = [
    page.body,
    (await get("/assets/form.js")).body,
    (await get("/assets/answer-rules.js")).body,
  ].map((text) => Buffer.byteLength(text));
  const total = sizes.reduce((a, b) => a + b, 0);
  process.stdout.write(`# page weight of a 20-field form: ${sizes.join(" + ")} = ${total} bytes\n`);
  assert.ok(total < 40 * 1024, `${total} bytes`);
});

test("the captcha widget of the provider, its script from configuration, allowed by the policy", async () => {
  const custom = await buildTestApp({
    captchaScriptUrls: {
      turnstile: "https://ts.example/api.js",
      hcaptcha: "https://hc.example/1/api.js",
      recaptcha: "https://rc.example/api.js",
    },
  });
  try {
    const { id } = await newForm(custom.app, { ...SAMPLE_FORM, providerCaptchaEnabled: true });
    await custom.db.query(
      `UPDATE forms SET settings = settings || '{"captchaProvider": "hcaptcha", "captchaSiteKey": "site-key-1"}', updated_at = now() WHERE id = $1`,
      [id],
    );
    const page = await custom.app.inject({ url: `/f/${id}` });
    const nonce = nonceOf(page.headers["content-security-policy"]);
    assert.match(
      page.body,
      new RegExp(
        `<script src="https://hc.example/1/api.js" nonce="${nonce}" async defer></script>`,
      ),
    );
    assert.match(page.body, /<div class="captcha h-captcha" data-sitekey="site-key-1"><\/div>/);
    assert.match(page.body, /<button type="submit"/);
    const csp = String(page.headers["content-security-policy"]);
    assert.match(csp, new RegExp(`script-src 'nonce-${nonce}' https://hc.example;`));
    assert.match(csp, /frame-src https:\/\/hc.example;/);
  } finally {
    await custom.close();
  }
});
