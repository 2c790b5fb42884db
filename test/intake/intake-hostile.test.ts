import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import {
  assertRefused,
  JSON_TYPE,
  multipart,
  newForm,
  type Post,
  post,
  storedSubmissions,
} from "./intake-fixtures.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;
let formId: string;

before(async () => {
  built = await buildTestApp({ intakeRateLimitMax: 1000 });
  formId = (await newForm(built.app)).id;
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

const unprocessable = (message: string) => ({
  error: { code: "unprocessable_entity", message },
});
const MULTIPART = "multipart/form-data; boundary=XB";
const TOO_MANY = unprocessable("body: must have at most 1000 fields");
const LONG_NAME = unprocessable("body: has a field name longer than 1000 characters");
const NOT_UTF8 = unprocessable("body: is not valid UTF-8");
const BAD_MULTIPART = unprocessable("body: is not valid multipart/form-data");

const many = (n: number) => Array.from({ length: n }, (_, i) => `f${i}=x`).join("&");
const longName = "n".repeat(100_000);

const CASES: [string, Post, number, object][] = [
  [
    "a body over 1 MB",
    { body: `a=${"x".repeat(1_100_000)}` },
    413,
    { error: { code: "payload_too_large", message: "body: must be at most 1048576 bytes" } },
  ],
  ["10,000 urlencoded fields", { body: many(10_000) }, 422, TOO_MANY],
  ["10,000 values of one name", { body: "a=1&".repeat(10_000) }, 422, TOO_MANY],
  [
    "10,000 multipart fields",
    multipart(Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}`, value: "x" }))),
    422,
    TOO_MANY,
  ],
  [
    "10,000 JSON members",
    {
      body: JSON.stringify(
        Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, 1])),
      ),
      contentType: JSON_TYPE,
    },
    422,
    TOO_MANY,
  ],
  ["a 100 kB urlencoded name", { body: `${longName}=x` }, 422, LONG_NAME],
  ["a 100 kB JSON name", { body: `{"${longName}": 1}`, contentType: JSON_TYPE }, 422, LONG_NAME],
  ["a 100 kB multipart name", multipart([{ name: longName, value: "x" }]), 422, LONG_NAME],
  [
    "100,000-deep JSON in a value",
    { body: `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`, contentType: JSON_TYPE },
    422,
    unprocessable("a: must be nested at most 32 levels deep"),
  ],
  [
    "100,000-deep JSON as the body",
    { body: `${"[".repeat(100_000)}${"]".repeat(100_000)}`, contentType: JSON_TYPE },
    422,
    unprocessable("body: must be a JSON object"),
  ],
  ["a raw byte that is not UTF-8", { body: Buffer.from([0x61, 0x3d, 0xff]) }, 422, NOT_UTF8],
  [
    "JSON that is not UTF-8",
    {
      body: Buffer.concat([Buffer.from('{"a": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
      contentType: JSON_TYPE,
    },
    422,
    NOT_UTF8,
  ],
  [
    "multipart that is not UTF-8",
    {
      body: Buffer.concat([
        Buffer.from('--XB\r\nContent-Disposition: form-data; name="a"\r\n\r\n'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from("\r\n--XB--\r\n"),
      ]),
      contentType: MULTIPART,
    },
    422,
    NOT_UTF8,
  ],
  [
    "a percent escape that is not UTF-8",
    { body: "a=%FF" },
    422,
    unprocessable("body: is not valid percent-encoding of UTF-8 text"),
  ],
  [
    "an escaped lone surrogate",
    { body: "a=%ED%A0%80" },
    422,
    unprocessable("body: is not valid percent-encoding of UTF-8 text"),
  ],
  [
    "a JSON lone surrogate",
    { body: '{"a": "x\\ud800"}', contentType: JSON_TYPE },
    422,
    unprocessable("a: must be valid Unicode text"),
  ],
  [
    "a lone surrogate deep in a JSON value",
    { body: '{"a": {"b": ["\\udc00"]}}', contentType: JSON_TYPE },
    422,
    unprocessable("a.b[0]: must be valid Unicode text"),
  ],
  [
    "a NUL in a value",
    { body: "a=x%00y" },
    422,
    unprocessable("a: must not contain NUL characters"),
  ],
  [
    "a NUL in a JSON value",
    { body: '{"a": "\\u0000"}', contentType: JSON_TYPE },
    422,
    unprocessable("a: must not contain NUL characters"),
  ],
  [
    "a NUL in a name",
    { body: "a%00b=1" },
    422,
    unprocessable("body: has a field name that is not valid text"),
  ],
  [
    "multipart without a boundary",
    { body: "--XB\r\n", contentType: "multipart/form-data" },
    422,
    BAD_MULTIPART,
  ],
  [
    "an unterminated multipart part",
    {
      body: '--XB\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello',
      contentType: MULTIPART,
    },
    422,
    BAD_MULTIPART,
  ],
  ["multipart garbage", { body: "hello world", contentType: MULTIPART }, 422, BAD_MULTIPART],
  [
    "a multipart part header of 1 MB",
    {
      body: `--XB\r\nContent-Disposition: form-data; name="a"\r\nX-Pad: ${"p".repeat(1_048_576)}\r\n\r\nx\r\n--XB--\r\n`,
      contentType: MULTIPART,
    },
    413,
    { error: { code: "payload_too_large", message: "body: must be at most 1048576 bytes" } },
  ],
  [
    "a wrong content type",
    { body: "<a/>", contentType: "text/xml" },
    415,
    {
      error: {
        code: "unsupported_media_type",
        message:
          "Content-Type: must be application/x-www-form-urlencoded, multipart/form-data, application/json",
      },
    },
  ],
];

for (const [what, request, status, body] of CASES) {
  test(`${what}: ${status}, nothing stored`, async () => {
    await assertRefused(built.db, formId, await post(built.app, formId, request), status, body);
  });
}

test("huge Origin and Referer headers: answered, the referrer stored cut to 2,000 characters", async () => {
  const { id } = await newForm(built.app, { allowedDomains: "example.com" });
  const referer = `https://example.com/${"r".repeat(12_000)}`;
  const res = await post(built.app, id, {
    body: "a=1",
    headers: { origin: `https://${"o".repeat(12_000)}.test`, referer },
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers["access-control-allow-origin"], undefined);
  const [stored] = await storedSubmissions(built.db, id);
  assert.deepEqual([stored?.isSpam, stored?.spamReason], [true, "domain"]);
  assert.equal(stored?.meta.referrer, referer.slice(0, 2000));
});

test("after all of it the server is healthy and takes a submission", async () => {
  const res = await post(built.app, formId, { body: "a=1" });
  assert.equal(res.status, 201);
  assert.equal((await storedSubmissions(built.db, formId)).length, 1);
  const health = await built.app.inject({ url: "/healthz" });
  assert.equal(health.statusCode, 200);
});
