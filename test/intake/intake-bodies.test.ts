import assert from "node:assert/strict";
import { test } from "node:test";
import { useTestApp } from "../helpers.ts";
import {
  assertRefused,
  countOf,
  JSON_TYPE,
  meta,
  multipart,
  newForm,
  post,
  storedSubmissions,
} from "./intake-fixtures.ts";

const built = useTestApp({ submissionBodyLimitBytes: 4096 });

const SUB_ID = /^sub_[A-Za-z0-9_-]{22}$/;

/** Posts `request`, expects 201 {ok, id}, and answers the one submission stored. */
async function accepted(request: Parameters<typeof post>[2], settings = {}) {
  const { id } = await newForm(built.app, settings);
  const res = await post(built.app, id, request);
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(Object.keys(res.body), ["ok", "id"]);
  assert.equal(res.body.ok, true);
  assert.match(res.body.id, SUB_ID);
  const stored = await storedSubmissions(built.db, id);
  assert.equal(stored.length, 1);
  assert.equal(stored[0]?.id, res.body.id);
  assert.equal(await countOf(built.db, id), 1);
  return stored[0];
}

test("urlencoded: answers in the order received, a repeated name an array, + and %XX decoded", async () => {
  const stored = await accepted({
    body: "name=Ada+L&tags=a&email=ada%40example.com&tags=b&empty=",
  });
  assert.deepEqual(stored, {
    id: stored?.id,
    isSpam: false,
    spamReason: null,
    answers: [
      { id: "name", label: "name", value: "Ada L" },
      { id: "tags", label: "tags", value: ["a", "b"] },
      { id: "email", label: "email", value: "ada@example.com" },
      { id: "empty", label: "empty", value: "" },
    ],
    searchText: "Ada L\na\nb\nada@example.com\n",
    meta: meta(),
  });
});

test("multipart fields: as urlencoded; an untouched file input is ignored", async () => {
  const stored = await accepted(
    multipart([
      { name: "message", value: "hello\r\nworld" },
      { name: "pick", value: "x" },
      { name: "pick", value: "y" },
      { name: "attachment", value: "", fileName: "" },
    ]),
  );
  assert.deepEqual(stored?.answers, [
    { id: "message", label: "message", value: "hello\r\nworld" },
    { id: "pick", label: "pick", value: ["x", "y"] },
  ]);
});

test("JSON: an object whose values are stored as sent", async () => {
  const stored = await accepted({
    body: JSON.stringify({ n: 1.5, ok: true, list: [1, "a"], nested: { a: null }, text: "é" }),
    contentType: JSON_TYPE,
  });
  assert.deepEqual(stored?.answers, [
    { id: "n", label: "n", value: 1.5 },
    { id: "ok", label: "ok", value: true },
    { id: "list", label: "list", value: [1, "a"] },
    { id: "nested", label: "nested", value: { a: null } },
    { id: "text", label: "text", value: "é" },
  ]);
  assert.equal(stored?.searchText, '1.5\ntrue\n[1,"a"]\n{"a":null}\né');
});

test("JSON: members in the order sent, integer-like names included", async () => {
  // Found by the intake property test: Object.entries put "1" and "0" before the other names.
  const stored = await accepted({
    body: '{"name": "Ada", "1": "one", "": "blank", "0": {"b": 1, "a": [2]}, "name": "Ada L"}',
    contentType: JSON_TYPE,
  });
  assert.deepEqual(stored?.answers, [
    { id: "name", label: "name", value: "Ada L" },
    { id: "1", label: "1", value: "one" },
    { id: "", label: "", value: "blank" },
    { id: "0", label: "0", value: { b: 1, a: [2] } },
  ]);
});

test("the honeypot and the captcha token fields are not stored", async () => {
  const body =
    "a=1&_gotcha=&cf-turnstile-response=t&h-captcha-response=t&g-recaptcha-response=t&b=2";
  const stored = await accepted({ body });
  assert.deepEqual(
    stored?.answers.map((answer) => answer.id),
    ["a", "b"],
  );
  const custom = await accepted({ body: "a=1&trap=&_gotcha=kept" }, { customHoneypot: "trap" });
  assert.deepEqual(custom?.answers, [
    { id: "a", label: "a", value: "1" },
    { id: "_gotcha", label: "_gotcha", value: "kept" },
  ]);
});

test("__proto__ and other names of Object.prototype are plain answers", async () => {
  const stored = await accepted({
    body: '{"__proto__": {"polluted": true}, "constructor": "c", "toString": "t"}',
    contentType: JSON_TYPE,
  });
  assert.deepEqual(stored?.answers, [
    { id: "__proto__", label: "__proto__", value: { polluted: true } },
    { id: "constructor", label: "constructor", value: "c" },
    { id: "toString", label: "toString", value: "t" },
  ]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const form = await accepted({ body: "__proto__=x&hasOwnProperty=y" });
  assert.deepEqual(form?.answers, [
    { id: "__proto__", label: "__proto__", value: "x" },
    { id: "hasOwnProperty", label: "hasOwnProperty", value: "y" },
  ]);
});

test("storage duration never: counted, answered with an id, nothing stored", async () => {
  const { id } = await newForm(built.app, { submissionStorageDuration: "never" });
  const res = await post(built.app, id, { body: "a=1" });
  assert.equal(res.status, 201);
  assert.match(res.body.id, SUB_ID);
  assert.deepEqual(await storedSubmissions(built.db, id), []);
  assert.equal(await countOf(built.db, id), 1);
});

test("refused bodies: other types 415, empty 422, over the limit 413, nothing stored", async () => {
  const { id } = await newForm(built.app);
  const cases: [Parameters<typeof post>[2], number, string, string][] = [
    [
      { body: "a=1", contentType: "text/plain" },
      415,
      "unsupported_media_type",
      "Content-Type: must be application/x-www-form-urlencoded, multipart/form-data, application/json",
    ],
    [
      { body: "a=1", contentType: "application/xml" },
      415,
      "unsupported_media_type",
      "Content-Type: must be application/x-www-form-urlencoded, multipart/form-data, application/json",
    ],
    [{}, 422, "unprocessable_entity", "body: is empty"],
    [{ body: "" }, 422, "unprocessable_entity", "body: is empty"],
    [{ body: "", contentType: JSON_TYPE }, 422, "unprocessable_entity", "body: is empty"],
    [{ body: "{}", contentType: JSON_TYPE }, 422, "unprocessable_entity", "body: is empty"],
    [{ body: "&&", contentType: undefined }, 422, "unprocessable_entity", "body: is empty"],
    [
      { body: `a=${"x".repeat(5000)}` },
      413,
      "payload_too_large",
      "body: must be at most 4096 bytes",
    ],
    [
      { body: "[1]", contentType: JSON_TYPE },
      422,
      "unprocessable_entity",
      "body: must be a JSON object",
    ],
    [
      { body: '"a"', contentType: JSON_TYPE },
      422,
      "unprocessable_entity",
      "body: must be a JSON object",
    ],
    [{ body: "{", contentType: JSON_TYPE }, 422, "unprocessable_entity", "body: is not valid JSON"],
    [
      multipart([{ name: "doc", value: "data", fileName: "a.exe" }]),
      422,
      "unprocessable_entity",
      "doc: file type not allowed",
    ],
  ];
  for (const [request, status, code, message] of cases) {
    const res = await post(built.app, id, request);
    await assertRefused(built.db, id, res, status, { error: { code, message } });
  }
});
