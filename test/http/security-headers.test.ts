import assert from "node:assert/strict";
import type net from "node:net";
import { after, before, describe, test } from "node:test";
import { MISSING_ID } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { sendRaw } from "../raw-http.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

const FORMS = "/api/v1/forms";
const DOCS_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";

let testApp: TestApp;
let base: string;
let port: number;
let fullKey: string;
let readKey: string;

before(async () => {
  testApp = await buildTestApp();
  ({ fullKey, readKey } = await createTenant());
  await testApp.app.listen({ port: 0, host: "127.0.0.1" });
  port = (testApp.app.server.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

const json = (key: string, body: unknown) => ({
  method: "POST",
  headers: { "api-key": key, "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** [label, path, request]: answers of the keyed routes, success and refusal alike. */
const keyed = (): [string, string, RequestInit][] => [
  ["200 list", FORMS, { headers: { "api-key": readKey } }],
  ["201 create", FORMS, json(fullKey, { name: "headers" })],
  ["404 form", `${FORMS}/${MISSING_ID}`, { headers: { "api-key": readKey } }],
  ["401 no key", FORMS, {}],
  ["401 bad key", `${FORMS}/${MISSING_ID}`, { headers: { "api-key": "fdk_nope" } }],
  ["403 scope", FORMS, json(readKey, { name: "x" })],
  ["422 query", `${FORMS}?nope=1`, { headers: { "api-key": readKey } }],
  ["422 body", FORMS, json(fullKey, {})],
  ["415 type", FORMS, { method: "POST", headers: { "api-key": fullKey }, body: "x" }],
];

/** Answers of routes without a key, and of no route at all. */
const unkeyed = (): [string, string, RequestInit][] => [
  ["healthz", "/healthz", {}],
  ["readyz", "/readyz", {}],
  ["document", "/api/v1/openapi.json", {}],
  ["404 route", "/api/v1/nowhere", { headers: { "api-key": readKey } }],
  ["400 url", `${FORMS}/%E0%A4%A`, { headers: { "api-key": readKey } }],
];

describe("X-Content-Type-Options and Cache-Control", () => {
  test("every keyed answer: nosniff, and no-store", async () => {
    for (const [label, path, init] of keyed()) {
      const res = await fetch(`${base}${path}`, init);
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", label);
      assert.equal(res.headers.get("cache-control"), "no-store", label);
    }
  });

  test("every other answer, errors included: nosniff, and no Cache-Control of ours", async () => {
    for (const [label, path, init] of unkeyed()) {
      const res = await fetch(`${base}${path}`, init);
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", label);
      assert.equal(res.headers.get("cache-control"), null, label);
    }
  });

  test("an unmet expectation (417), which Node would answer itself: nosniff", async () => {
    const res = await sendRaw(
      port,
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\nConnection: close\r\n\r\n",
    );
    assert.equal(res.status, 417);
    assert.match(res.headers, /\r\nx-content-type-options: nosniff\r\n/);
  });

  test("answers Node's parser writes itself (431, 400): nosniff", async () => {
    const big = await sendRaw(
      port,
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`,
    );
    const bad = await sendRaw(port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nNo colon\r\n\r\n");
    for (const res of [big, bad]) {
      assert.match(res.headers, /\r\nx-content-type-options: nosniff\r\n/, String(res.status));
    }
    assert.deepEqual([big.status, bad.status], [431, 400]);
  });
});

describe("the reference page", () => {
  test("has a policy that no other site may frame it, on the page and its files", async () => {
    for (const path of ["/docs", "/docs/", "/docs/json", "/docs/static/swagger-initializer.js"]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
      assert.equal(res.headers.get("content-security-policy"), DOCS_POLICY, path);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    }
    // The API's answers carry no page policy.
    const api = await fetch(`${base}${FORMS}`, { headers: { "api-key": readKey } });
    assert.equal(api.headers.get("content-security-policy"), null);
  });

  test("loads nothing the policy forbids: no inline script, only its own files, with their types", async () => {
    const page = await (await fetch(`${base}/docs`)).text();
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length > 0);
    for (const [, attributes, content] of scripts) {
      assert.equal(content?.trim(), "", "an inline script would be blocked by script-src 'self'");
      assert.match(attributes ?? "", /\bsrc="\/docs\/static\//);
    }
    assert.doesNotMatch(page, /\bon[a-z]+\s*=/i, "an inline handler would be blocked");
    const references = [...page.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
    const types: Record<string, RegExp> = {
      js: /^application\/javascript/,
      css: /^text\/css/,
      png: /^image\/png$/,
      svg: /^image\/svg\+xml/,
    };
    for (const reference of references) {
      // Same origin: a path, never a scheme or a host.
      assert.match(reference, /^\/docs\/static\/(?:[\w-]+\/)*[\w.-]+$/, reference);
      const res = await fetch(`${base}${reference}`);
      await res.arrayBuffer();
      assert.equal(res.status, 200, reference);
      // With nosniff, a script or a style sheet is used only if its type says what it is.
      const extension = reference.split(".").pop() ?? "";
      assert.match(res.headers.get("content-type") ?? "", types[extension] ?? /^$/, reference);
    }
    // The page loads its document from ./json, within connect-src (default-src 'self').
    const initializer = await (await fetch(`${base}/docs/static/swagger-initializer.js`)).text();
    assert.match(initializer, /resolveUrl\('\.\/json'\)/);
    // No validator badge, which img-src 'self' data: would block (it comes from swagger.io).
    assert.match(initializer, /validatorUrl: null/);
  });
});
