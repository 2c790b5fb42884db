import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { CaptchaOutcome } from "../../src/intake/captcha.ts";
import { createCaptchaVerifier } from "../../src/intake/captcha-verifier.ts";

/** A stand-in for the three providers' siteverify endpoints: each test says how it answers. */
type Answer = (request: IncomingMessage, response: ServerResponse) => void;
let answer: Answer = (_request, response) => response.end();
const received: { path: string; body: URLSearchParams }[] = [];
const provider = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    received.push({
      path: request.url ?? "",
      body: new URLSearchParams(Buffer.concat(chunks).toString("utf8")),
    });
    answer(request, response);
  });
});
let base = "";

before(async () => {
  provider.listen(0, "127.0.0.1");
  await once(provider, "listening");
  base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
});
after(() => {
  provider.closeAllConnections();
  provider.close();
});

const json =
  (body: unknown, status = 200): Answer =>
  (_request, response) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };

function verifier(timeoutMs = 4_500, urlBase = base) {
  return createCaptchaVerifier({
    verifyUrls: {
      turnstile: `${urlBase}/turnstile`,
      hcaptcha: `${urlBase}/hcaptcha`,
      recaptcha: `${urlBase}/recaptcha`,
    },
    minScore: 0.5,
    timeoutMs,
  });
}

async function verify(
  fields: Record<string, unknown>,
  timeoutMs?: number,
): Promise<CaptchaOutcome> {
  received.length = 0;
  return verifier(timeoutMs).verify({ fields, secret: "s3cret", remoteIp: "203.0.113.9" });
}

test("each token field goes to its provider with the secret, the token and the client address", async () => {
  answer = json({ success: true });
  for (const [field, path] of [
    ["cf-turnstile-response", "/turnstile"],
    ["h-captcha-response", "/hcaptcha"],
    ["g-recaptcha-response", "/recaptcha"],
  ]) {
    assert.equal(await verify({ email: "a@b.test", [field as string]: "tok-1" }), "passed");
    assert.equal(received.length, 1);
    assert.equal(received[0]?.path, path);
    assert.deepEqual(Object.fromEntries(received[0]?.body ?? []), {
      secret: "s3cret",
      response: "tok-1",
      remoteip: "203.0.113.9",
    });
  }
});

test("a token the provider refuses fails", async () => {
  answer = json({ success: false, "error-codes": ["invalid-input-response"] });
  assert.equal(await verify({ "h-captcha-response": "bad" }), "failed");
});

test("reCAPTCHA v3: a score under the minimum fails, the minimum itself passes", async () => {
  answer = json({ success: true, score: 0.3, action: "submit" });
  assert.equal(await verify({ "g-recaptcha-response": "t" }), "failed");
  answer = json({ success: true, score: 0.5, action: "submit" });
  assert.equal(await verify({ "g-recaptcha-response": "t" }), "passed");
  answer = json({ success: true, score: 0.9 });
  assert.equal(await verify({ "g-recaptcha-response": "t" }), "passed");
});

test("no token, an empty, repeated or oversized token fail without asking the provider", async () => {
  answer = json({ success: true });
  assert.equal(await verify({ email: "a@b.test" }), "failed");
  assert.equal(await verify({ "cf-turnstile-response": "" }), "failed");
  assert.equal(await verify({ "cf-turnstile-response": ["a", "b"] }), "failed");
  assert.equal(await verify({ "cf-turnstile-response": "x".repeat(100_000) }), "failed");
  assert.equal(received.length, 0);
});

test("a provider that errs, answers 4xx or 5xx, or answers garbage leaves the token unverified", async () => {
  const broken: Answer[] = [
    json({ success: true }, 500),
    json({ success: true }, 503),
    json({ success: true }, 400),
    (_request, response) => response.end("<html>not json</html>"),
    json({ ok: true }),
    json("success"),
    (_request, response) =>
      response.end(JSON.stringify({ success: true, pad: "x".repeat(100_000) })),
    (request) => request.socket.destroy(),
  ];
  for (const each of broken) {
    answer = each;
    assert.equal(await verify({ "cf-turnstile-response": "t" }), "unverified");
  }
});

test("a provider that never answers is unverified once the timeout passes", async () => {
  answer = () => {};
  assert.equal(await verify({ "cf-turnstile-response": "t" }, 200), "unverified");
  answer = (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write('{"success":');
  };
  assert.equal(await verify({ "cf-turnstile-response": "t" }, 200), "unverified");
});

test("a provider that cannot be reached is unverified", async () => {
  const closed = createServer();
  closed.listen(0, "127.0.0.1");
  await once(closed, "listening");
  const port = (closed.address() as AddressInfo).port;
  closed.close();
  const outcome = await verifier(1_000, `http://127.0.0.1:${port}`).verify({
    fields: { "cf-turnstile-response": "t" },
    secret: "s",
    remoteIp: "203.0.113.9",
  });
  assert.equal(outcome, "unverified");
});
