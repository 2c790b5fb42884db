import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { prefersHtml } from "../../src/home/home.routes.ts";
import { createTenant, useTestApp } from "../helpers.ts";

// One request per window for a key and for an address: any quota spent would show at once.
const testApp = useTestApp({ rateLimitMax: 1, rateLimitUnauthenticatedMax: 1 });

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

const HOME = {
  name: "formdeck",
  version: pkg.version,
  description: "A self-hostable forms service. Every /api/v1 operation needs an `api-key` header.",
  links: {
    docs: "/docs",
    openapi: "/api/v1/openapi.json",
    forms: "/api/v1/forms",
    health: "/healthz",
  },
};

for (const url of ["/", "/api/v1"]) {
  test(`GET ${url} → 200 JSON links to the docs and the document, without a key`, async () => {
    for (const accept of [undefined, "*/*", "application/json"]) {
      const res = await testApp.app.inject({ url, headers: accept ? { accept } : {} });
      assert.equal(res.statusCode, 200, `Accept: ${accept}`);
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      assert.deepEqual(res.json(), HOME);
    }
  });

  test(`GET ${url} from a browser → a small HTML page with the same links`, async () => {
    const res = await testApp.app.inject({
      url,
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
    assert.match(res.body, /<title>formdeck<\/title>/);
    assert.match(res.body, /<a href="\/docs">/);
    assert.match(res.body, /<a href="\/api\/v1\/openapi.json">/);
  });
}

test("the links lead somewhere: the docs page and the document answer", async () => {
  const docs = await testApp.app.inject({ url: "/docs" });
  assert.ok(docs.statusCode === 200 || docs.statusCode === 302, String(docs.statusCode));
  assert.equal((await testApp.app.inject({ url: "/api/v1/openapi.json" })).statusCode, 200);
});

test("GET / and GET /api/v1 spend no quota: neither the address's nor a key's", async () => {
  const { readKey } = await createTenant();
  // An address of this test's own: with REDIS_URL set, the address's quota is shared with every
  // other test of the run that made a keyless request from 127.0.0.1 in the same window.
  const remoteAddress = `198.51.100.${1 + Math.floor(Math.random() * 254)}`;
  for (let i = 0; i < 3; i++) {
    assert.equal((await testApp.app.inject({ url: "/", remoteAddress })).statusCode, 200);
    const withKey = await testApp.app.inject({
      url: "/api/v1",
      remoteAddress,
      headers: { "api-key": readKey },
    });
    assert.equal(withKey.statusCode, 200);
    assert.equal(withKey.headers["x-ratelimit-remaining"], undefined);
  }
  // The key's one request of the window is still there, and so is the address's.
  const listed = await testApp.app.inject({
    url: "/api/v1/forms",
    headers: { "api-key": readKey },
  });
  assert.equal(listed.statusCode, 200);
  assert.equal(listed.headers["x-ratelimit-remaining"], "0");
  const unknown = await testApp.app.inject({
    url: "/api/v1/forms",
    remoteAddress,
    headers: { "api-key": "nope" },
  });
  assert.equal(unknown.statusCode, 401);
});

test("prefersHtml: HTML only when it is weighted above JSON", () => {
  assert.equal(prefersHtml(undefined), false);
  assert.equal(prefersHtml("*/*"), false);
  assert.equal(prefersHtml("text/html"), true);
  assert.equal(prefersHtml("text/html;q=0.5, application/json"), false);
  assert.equal(prefersHtml("application/json;q=0.9, text/*"), true);
  assert.equal(prefersHtml("text/html;q=0, */*"), false);
});
