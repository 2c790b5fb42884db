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
} from "../intake/intake-fixtures.ts";
import { field, options, rule } from "./field-builders.ts";

const built = useTestApp();

/** A hosted form: a name (required), an email, a choice that shows a follow-up, a page, a rating. */
const contactFields = [
  field("name", "short_answer", { required: true, label: "Your name" }),
  field("email", "email", { label: "Email" }),
  field("topic", "single_choice", {
    label: "Topic",
    options: options("Sales", "Support"),
    logic: {
      rules: [rule("r1", "show_field", { fields: ["order"] }, [["topic", "equals", "Support"]])],
    },
  }),
  field("order", "short_answer", { required: true, label: "Order number" }),
  field("intro", "heading", { label: "More" }),
  field("p2", "page", { label: "Page two" }),
  field("stars", "rating", { label: "Stars", ratingCount: 5 }),
  field("tags", "multiple_choice", { label: "Tags", options: options("a", "b", "c") }),
];

async function hostedForm(
  fields: unknown[] = contactFields,
  settings: Record<string, unknown> = {},
) {
  return newForm(built.app, { type: "hosted", fields, ...settings });
}

const json = (body: unknown) => ({ body: JSON.stringify(body), contentType: JSON_TYPE });
const refusal = (message: string) => ({ error: { code: "unprocessable_entity", message } });

test("hosted answers are stored in the fields' order with their labels; blanks and hidden fields left out", async () => {
  const { id } = await hostedForm();
  const res = await post(built.app, id, {
    body: "stars=4&email=&name=Ada&topic=Sales&order=ignored-because-hidden&tags=b&tags=a&_token=t1",
  });
  assert.equal(res.status, 201);
  const [stored] = await storedSubmissions(built.db, id);
  assert.deepEqual(stored?.answers, [
    { id: "name", label: "Your name", value: "Ada" },
    { id: "topic", label: "Topic", value: "Sales" },
    { id: "stars", label: "Stars", value: "4" },
    { id: "tags", label: "Tags", value: ["b", "a"] },
  ]);
  assert.equal(await countOf(built.db, id), 1);
});

test("a field shown by logic is checked and required; the JSON answer names the first wrong field", async () => {
  const { id } = await hostedForm();
  const missing = await post(built.app, id, json({ topic: "Support", stars: 9 }));
  assert.equal(missing.status, 422);
  assert.deepEqual(missing.body, refusal("name: is required"));
  const order = await post(built.app, id, json({ name: "Ada", topic: "Support", stars: 9 }));
  assert.deepEqual(order.body, refusal("order: is required"));
  const stars = await post(
    built.app,
    id,
    json({ name: "Ada", topic: "Support", order: "7", stars: 9 }),
  );
  assert.deepEqual(stars.body, refusal("stars: must be a whole number from 1 to 5"));
  const ok = await post(
    built.app,
    id,
    json({ name: "Ada", topic: "Support", order: "7", stars: 5 }),
  );
  assert.equal(ok.status, 201);
  const [stored] = await storedSubmissions(built.db, id);
  assert.deepEqual(stored?.answers, [
    { id: "name", label: "Your name", value: "Ada" },
    { id: "topic", label: "Topic", value: "Support" },
    { id: "order", label: "Order number", value: "7" },
    { id: "stars", label: "Stars", value: 5 },
  ]);
});

test("names that are not answer-taking fields are refused; the honeypot, tokens and _token are accepted unstored", async () => {
  const { id } = await hostedForm();
  for (const [name, body] of [
    ["nope", "name=Ada&nope=1"],
    ["intro", "name=Ada&intro=x"],
    ["p2", "name=Ada&p2=x"],
  ] as const) {
    const res = await post(built.app, id, { body });
    assert.equal(res.status, 422, name);
    assert.deepEqual(res.body, refusal(`${name}: is not a field of this form`));
  }
  const ok = await post(built.app, id, {
    body: "name=Ada&_token=abc&cf-turnstile-response=x&h-captcha-response=y",
  });
  assert.equal(ok.status, 201);
  const spam = await post(built.app, id, { body: "name=Bot&_gotcha=filled" });
  assert.equal(spam.status, 201);
  const stored = await storedSubmissions(built.db, id);
  assert.deepEqual(
    stored.map((s) => [s.answers, s.spamReason]),
    [
      [[{ id: "name", label: "Your name", value: "Ada" }], null],
      [[{ id: "name", label: "Your name", value: "Bot" }], "honeypot"],
    ],
  );
});

test("values: email, number, website, date, phone, choices, scale and lengths", async () => {
  const fields = [
    field("e", "email"),
    field("n", "number"),
    field("w", "website"),
    field("d", "date"),
    field("ph", "phone"),
    field("c", "dropdown", { options: options("x", "y") }),
    field("m", "multiple_choice", { options: options("x", "y") }),
    field("s", "scale", { scaleMin: 0, scaleMax: 3 }),
    field("t", "short_answer"),
  ];
  const { id } = await hostedForm(fields);
  const cases: [Record<string, unknown>, string][] = [
    [{ e: "a@b" }, "e: must be an email address"],
    [{ n: "1e5" }, "n: must be a number"],
    [{ w: "ftp://x.org" }, "w: must be an absolute http(s) URL"],
    [{ d: "2025-02-30" }, "d: must be a date (YYYY-MM-DD)"],
    [{ ph: "call me" }, "ph: must be a phone number"],
    [{ c: "z" }, "c: must be one of the options"],
    [{ m: ["x", "x"] }, "m: must not repeat an option"],
    [{ s: 4 }, "s: must be a whole number from 0 to 3"],
    [{ t: "a".repeat(1_001) }, "t: must be at most 1000 characters"],
  ];
  for (const [body, message] of cases) {
    const res = await post(built.app, id, json(body));
    assert.deepEqual(res.body, refusal(message), message);
  }
  assert.equal((await storedSubmissions(built.db, id)).length, 0);
  const ok = await post(
    built.app,
    id,
    json({
      e: "a@b.co",
      n: -1.5,
      w: "https://x.org/a",
      d: "2024-02-29",
      ph: "+1 (555) 010-99",
      c: "y",
      m: ["y", "x"],
      s: "0",
      t: "hi",
    }),
  );
  assert.equal(ok.status, 201);
});

test("a browser's refused post gets the form again with each wrong field marked; nothing is stored", async () => {
  const { id } = await hostedForm();
  const res = await post(built.app, id, {
    body: "email=not-an-address&topic=Sales",
    headers: { accept: BROWSER_ACCEPT },
  });
  assert.equal(res.status, 422);
  assert.match(String(res.headers["content-type"]), /^text\/html/);
  // The form again: every wrong field marked and tied to its reason, the answers as typed.
  const invalid = [
    ...res.text.matchAll(/<(?:input|textarea|select)[^>]*aria-invalid="true"[^>]*>/g),
  ];
  assert.deepEqual(
    invalid.map(([tag]) => /name="([^"]+)"/.exec(tag)?.[1]),
    ["name", "email"],
  );
  assert.match(res.text, /value="not-an-address"/);
  assert.equal((await storedSubmissions(built.db, id)).length, 0);
  assert.equal(await countOf(built.db, id), 0);
});

test("a hosted form verifies only its captchaProvider's token", async () => {
  const { id } = await hostedForm([field("name", "short_answer")], {
    providerCaptchaEnabled: true,
    providerCaptchaSecretKey: "secret",
  });
  const other = await post(built.app, id, { body: "name=Ada&h-captcha-response=pass" });
  assert.equal(other.status, 403);
  assert.deepEqual(other.body, {
    error: { code: "captcha_failed", message: "captcha: a token is required" },
  });
  assert.equal((await storedSubmissions(built.db, id)).length, 0);
});

test("an endpoint form keeps every name as its answer", async () => {
  const { id } = await newForm(built.app);
  const res = await post(built.app, id, { body: "anything=1&_token=x" });
  assert.equal(res.status, 201);
  const [stored] = await storedSubmissions(built.db, id);
  assert.deepEqual(stored?.answers, [
    { id: "anything", label: "anything", value: "1" },
    { id: "_token", label: "_token", value: "x" },
  ]);
});

test("a honeypot named with a quote is known under the name a browser's multipart body gives it", async () => {
  const { id } = await hostedForm([field("name", "short_answer")], { customHoneypot: 'hp"x' });
  const part = (name: string, value: string) =>
    `--XB\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const body = (trap: string) => `${part("name", "Ada")}${part("hp%22x", trap)}--XB--\r\n`;
  const contentType = "multipart/form-data; boundary=XB";
  assert.equal((await post(built.app, id, { body: body(""), contentType })).status, 201);
  assert.equal((await post(built.app, id, { body: body("bot"), contentType })).status, 201);
  const stored = await storedSubmissions(built.db, id);
  assert.deepEqual(
    stored.map((s) => [s.answers, s.spamReason]),
    [
      [[{ id: "name", label: "Label of name", value: "Ada" }], null],
      [[{ id: "name", label: "Label of name", value: "Ada" }], "honeypot"],
    ],
  );
});
