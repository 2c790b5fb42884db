import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, test } from "node:test";
import { MISSING_ID } from "../forms/form-fixtures.ts";
import { buildTestApp, useTestApp } from "../helpers.ts";
import {
  assertRefused,
  countOf,
  meta,
  newForm,
  post,
  storedSubmissions,
} from "./intake-fixtures.ts";

const built = useTestApp();

/** An address no earlier run used: the rate-limit counts outlive a run when kept in Redis. */
const freshAddress = () =>
  `2001:db8::${randomBytes(4)
    .toString("hex")
    .replace(/^(.{4})/, "$1:")}`;

const error = (code: string, message: string) => ({ error: { code, message } });
const FORBIDDEN_ADDRESS = error("forbidden", "address: may not submit to this form");
const FORBIDDEN_COUNTRY = error(
  "forbidden",
  "country: submissions from it are not accepted by this form",
);

test("check 1: per address and form, the limit, its headers, then 429 with Retry-After", async () => {
  const limited = await buildTestApp({ intakeRateLimitMax: 3 });
  after(() => limited.close());
  const { id } = await newForm(limited.app);
  const { id: other } = await newForm(limited.app);
  for (let i = 1; i <= 3; i++) {
    const res = await post(limited.app, id, { body: `n=${i}` });
    assert.equal(res.status, 201);
    assert.equal(res.headers["x-ratelimit-limit"], "3");
    assert.equal(res.headers["x-ratelimit-remaining"], String(3 - i));
    assert.match(String(res.headers["x-ratelimit-reset"]), /^\d+$/);
  }
  const refused = await post(limited.app, id, { body: "n=4" });
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, "rate_limit_exceeded");
  assert.match(String(refused.headers["retry-after"]), /^[1-9]\d*$/);
  assert.equal(refused.headers["x-ratelimit-remaining"], "0");
  assert.equal((await storedSubmissions(built.db, id)).length, 3);
  // Another address, and another form, have quotas of their own.
  assert.equal(
    (await post(limited.app, id, { body: "n=5", remoteAddress: freshAddress() })).status,
    201,
  );
  assert.equal((await post(limited.app, other, { body: "n=1" })).status, 201);
  // The limit comes first: even a missing form spends it.
  const missingFormClient = freshAddress();
  for (let i = 0; i < 3; i++) {
    assert.equal(
      (await post(limited.app, MISSING_ID, { remoteAddress: missingFormClient })).status,
      404,
    );
  }
  const overLimit = await post(limited.app, MISSING_ID, { remoteAddress: missingFormClient });
  assert.equal(overLimit.status, 429);
});

test("check 2: a missing, deleted or odd form id is 404", async () => {
  const { id, key } = await newForm(built.app);
  const deleted = await built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${id}`,
    headers: { "api-key": key },
  });
  assert.equal(deleted.statusCode, 204);
  for (const formId of [id, MISSING_ID, "form_x", "%2e%2e", "x".repeat(5000), "form_ä"]) {
    const res = await post(built.app, encodeURI(formId), {
      body: "a=1",
      remoteAddress: "192.0.2.10",
    });
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 404, body: error("not_found", "form: not found") },
      formId,
    );
  }
});

test("check 3: a closed form is 403 form_closed, saying why", async () => {
  const manual = await newForm(built.app, { isClosed: true });
  await assertRefused(
    built.db,
    manual.id,
    await post(built.app, manual.id, { body: "a=1" }),
    403,
    error("form_closed", "form: is closed"),
  );
  const deadline = await newForm(
    built.app,
    {
      autoCloseEnabled: true,
      autoCloseDate: "2020-01-02",
      autoCloseTime: "03:04",
      autoCloseTimezone: "UTC",
    },
    "paid",
  );
  await assertRefused(
    built.db,
    deadline.id,
    await post(built.app, deadline.id, { body: "a=1" }),
    403,
    error("form_closed", "form: closed at 2020-01-02T03:04:00.000Z"),
  );
  const limited = await newForm(built.app, { limitResponses: true, maxResponses: 1 });
  assert.equal((await post(built.app, limited.id, { body: "a=1" })).status, 201);
  const full = await post(built.app, limited.id, { body: "a=2" });
  assert.deepEqual(
    { status: full.status, body: full.body },
    { status: 403, body: error("form_closed", "form: has reached its limit of 1 responses") },
  );
  assert.equal((await storedSubmissions(built.db, limited.id)).length, 1);
});

test("check 4: ipBlacklist, addresses and ranges, an IPv4-mapped address matching its IPv4 entry", async () => {
  const { id } = await newForm(built.app, {
    ipBlacklist: "203.0.113.7, 198.51.100.0/24, 2001:db8::/32",
  });
  for (const address of ["203.0.113.7", "::ffff:203.0.113.7", "198.51.100.200", "2001:db8::5"]) {
    await assertRefused(
      built.db,
      id,
      await post(built.app, id, { body: "a=1", remoteAddress: address }),
      403,
      FORBIDDEN_ADDRESS,
    );
  }
  const allowed = await post(built.app, id, { body: "a=1", remoteAddress: "203.0.113.8" });
  assert.equal(allowed.status, 201);
  const mapped = await newForm(built.app, { ipBlacklist: "::ffff:192.0.2.1" });
  const res = await post(built.app, mapped.id, { body: "a=1", remoteAddress: "192.0.2.1" });
  assert.equal(res.status, 403, "an IPv4 client matches its IPv4-mapped entry too");
});

test("check 4: X-Forwarded-For is ignored without TRUST_PROXY", async () => {
  const { id } = await newForm(built.app, { ipBlacklist: "192.0.2.0/24" });
  const res = await post(built.app, id, {
    body: "a=1",
    headers: { "x-forwarded-for": "203.0.113.50" },
    remoteAddress: "192.0.2.3",
  });
  await assertRefused(built.db, id, res, 403, FORBIDDEN_ADDRESS);
  const forged = await post(built.app, id, {
    body: "a=1",
    headers: { "x-forwarded-for": "192.0.2.3" },
    remoteAddress: "203.0.113.51",
  });
  assert.equal(forged.status, 201);
  const stored = await storedSubmissions(built.db, id);
  assert.deepEqual(stored[0]?.meta, meta({ ip: "203.0.113.51" }));
});

test("check 5: allowedCountries, case-insensitive; an unknown country is refused", async () => {
  const { id, api } = await newForm(built.app);
  await api.updateOk(id, { allowedCountries: "DE,fr" });
  for (const headers of [{ "x-test-country": "US" }, {}] as Record<string, string>[]) {
    await assertRefused(
      built.db,
      id,
      await post(built.app, id, { body: "a=1", headers }),
      403,
      FORBIDDEN_COUNTRY,
    );
  }
  const res = await post(built.app, id, { body: "a=1", headers: { "x-test-country": "FR" } });
  assert.equal(res.status, 201);
  assert.deepEqual((await storedSubmissions(built.db, id))[0]?.meta, meta({ country: "FR" }));
});

test("checks run in the table's order: closed before blacklisted before country before body", async () => {
  const { id, api } = await newForm(built.app, { ipBlacklist: "192.0.2.66", isClosed: true });
  await api.updateOk(id, { allowedCountries: "DE" });
  const request = { body: "", contentType: "text/plain", remoteAddress: "192.0.2.66" };
  assert.equal((await post(built.app, id, request)).body.error.code, "form_closed");
  await api.updateOk(id, { isClosed: false });
  assert.deepEqual((await post(built.app, id, request)).body, FORBIDDEN_ADDRESS);
  await api.updateOk(id, { ipBlacklist: "" });
  assert.deepEqual((await post(built.app, id, request)).body, FORBIDDEN_COUNTRY);
  await api.updateOk(id, { allowedCountries: "" });
  assert.equal((await post(built.app, id, request)).status, 415);
});

test("check 7: captcha missing or failed is 403 captcha_failed; unverified is stored as spam", async () => {
  const { id } = await newForm(built.app, {
    providerCaptchaEnabled: true,
    providerCaptchaSecretKey: "s3cret",
  });
  const failed = error("captcha_failed", "captcha: the provider did not accept the token");
  const address = { remoteAddress: "192.0.2.20" };
  await assertRefused(
    built.db,
    id,
    await post(built.app, id, { body: "a=1", ...address }),
    403,
    error("captcha_failed", "captcha: a token is required"),
  );
  await assertRefused(
    built.db,
    id,
    await post(built.app, id, { body: "a=1&cf-turnstile-response=fail", ...address }),
    403,
    failed,
  );
  const asked = built.captcha.checks.at(-1);
  assert.deepEqual(asked, {
    fields: { a: "1", "cf-turnstile-response": "fail" },
    secret: "s3cret",
    remoteIp: "192.0.2.20",
  });
  await assertRefused(
    built.db,
    id,
    await post(built.app, id, {
      body: `a=1&h-captcha-response=${"x".repeat(100_000)}`,
      ...address,
    }),
    403,
    error("captcha_failed", "captcha: the token is not valid"),
  );
  const passed = await post(built.app, id, { body: "a=1&g-recaptcha-response=pass", ...address });
  assert.equal(passed.status, 201);
  const unverified = await post(built.app, id, { body: "a=2&g-recaptcha-response=hang" });
  assert.equal(unverified.status, 201);
  const stored = await storedSubmissions(built.db, id);
  assert.deepEqual(
    stored.map((s) => [s.isSpam, s.spamReason, s.answers]),
    [
      [false, null, [{ id: "a", label: "a", value: "1" }]],
      [true, "captcha_unverified", [{ id: "a", label: "a", value: "2" }]],
    ],
  );
  assert.equal(await countOf(built.db, id), 1, "spam is not counted");
});

test("check 9: a filled honeypot is spam, answered exactly like a success", async () => {
  const { id } = await newForm(built.app);
  const ham = await post(built.app, id, { body: "a=1&_gotcha=" });
  const spam = await post(built.app, id, { body: "a=2&_gotcha=bot" });
  assert.equal(spam.status, ham.status);
  assert.deepEqual(Object.keys(spam.body), ["ok", "id"]);
  const custom = await newForm(built.app, { customHoneypot: "website" });
  await post(built.app, custom.id, { body: "a=3&website=x" });
  const stored = [
    ...(await storedSubmissions(built.db, id)),
    ...(await storedSubmissions(built.db, custom.id)),
  ];
  assert.deepEqual(
    stored.map((s) => [s.isSpam, s.spamReason]),
    [
      [false, null],
      [true, "honeypot"],
      [true, "honeypot"],
    ],
  );
  assert.equal(stored[1]?.id, spam.body.id);
  assert.equal(await countOf(built.db, id), 1);
});

test("check 9: allowedDomains: Origin, else Referer; subdomains by *.; the service's own origin always", async () => {
  const { id } = await newForm(built.app, { allowedDomains: "Example.com, *.shop.test" });
  const cases: [Record<string, string>, boolean][] = [
    [{ origin: "https://example.com" }, false],
    [{ origin: "http://EXAMPLE.com:8080" }, false],
    [{ origin: "https://www.example.com" }, true],
    [{ origin: "https://a.shop.test" }, false],
    [{ origin: "https://shop.test" }, true],
    [{ referer: "https://example.com/contact?x=1" }, false],
    [{ origin: "https://evil.test", referer: "https://example.com/" }, true],
    [{}, true],
    [{ origin: "http://localhost:80" }, false],
  ];
  for (const [headers, spam] of cases) {
    const res = await post(built.app, id, {
      body: "a=1",
      headers: { ...headers, host: "localhost:80" },
      remoteAddress: `192.0.2.${cases.findIndex((c) => c[0] === headers) + 100}`,
    });
    assert.equal(res.status, 201, JSON.stringify(headers));
    const last = (await storedSubmissions(built.db, id)).find((s) => s.id === res.body.id);
    assert.deepEqual(
      [last?.isSpam, last?.spamReason],
      spam ? [true, "domain"] : [false, null],
      JSON.stringify(headers),
    );
  }
});
