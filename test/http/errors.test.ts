import assert from "node:assert/strict";
import type net from "node:net";
import { after, before, describe, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { requestOverHttp, sendRaw } from "../raw-http.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

const FORMS = "/api/v1/forms";
const BODY_LIMIT = 1024;

const errorBody = (code: string, message: string) => ({ error: { code, message } });
const routeMissing = (method: string, path: string) =>
  errorBody("not_found", `route: ${method} ${path} does not exist`);
const unsupported = errorBody("unsupported_media_type", "Content-Type: must be application/json");
const notJson = errorBody("unprocessable_entity", "body: is not valid JSON");
const badUrl = errorBody("bad_request", "url: is not valid percent-encoding");

let testApp: TestApp;
let fullKey: string;

before(async () => {
  testApp = await buildTestApp({ bodyLimitBytes: BODY_LIMIT });
  ({ fullKey } = await createTenant());
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

function send(method: "POST" | "PATCH", payload: string | Buffer, contentType?: string) {
  const headers: Record<string, string> = { "api-key": fullKey };
  if (contentType !== undefined) headers["content-type"] = contentType;
  return testApp.app.inject({ method, url: FORMS, headers, payload });
}

describe("errors answered through the application", () => {
  test("an unknown route → 404, with or without a key", async () => {
    for (const [url, path] of [
      ["/nope", "/nope"],
      ["/api/v1/nope?x=1", "/api/v1/nope"],
      ["/api/v2/forms", "/api/v2/forms"],
      ["/api/v1/forms/a/b", "/api/v1/forms/a/b"],
    ] as const) {
      for (const headers of [{}, { "api-key": fullKey }]) {
        const res = await testApp.app.inject({ url, headers });
        assert.equal(res.statusCode, 404, url);
        assert.deepEqual(res.json(), routeMissing("GET", path));
      }
    }
  });

  test("a method the path does not have → 404 naming method and path", async () => {
    for (const [method, url] of [
      ["PUT", FORMS],
      ["DELETE", FORMS],
      ["PATCH", FORMS],
      ["POST", `${FORMS}/form_AAAAAAAAAAAAAAAAAAAAAA`],
      ["POST", "/healthz"],
    ] as const) {
      const res = await testApp.app.inject({ method, url, headers: { "api-key": fullKey } });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(res.json(), routeMissing(method, url));
    }
  });

  test("a body over the limit → 413, on create and on update", async () => {
    const big = JSON.stringify({ name: "x".repeat(BODY_LIMIT) });
    for (const method of ["POST", "PATCH"] as const) {
      const res = await testApp.app.inject({
        method,
        url: method === "POST" ? FORMS : `${FORMS}/form_AAAAAAAAAAAAAAAAAAAAAA`,
        headers: { "api-key": fullKey, "content-type": "application/json" },
        payload: big,
      });
      assert.equal(res.statusCode, 413, method);
      assert.deepEqual(
        res.json(),
        errorBody("payload_too_large", `body: must be at most ${BODY_LIMIT} bytes`),
      );
    }
    // A body exactly at the limit is read (and then validated).
    const atLimit = `{"name":"${"y".repeat(BODY_LIMIT - 11)}"}`;
    assert.equal(Buffer.byteLength(atLimit), BODY_LIMIT);
    const res = await send("POST", atLimit, "application/json");
    assert.equal(res.statusCode, 422);
    assert.deepEqual(
      res.json(),
      errorBody("unprocessable_entity", "name: must be at most 200 characters"),
    );
  });

  test("a body that is not application/json → 415", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const res = await send("POST", '{"name":"x"}', type);
      assert.equal(res.statusCode, 415, type);
      assert.deepEqual(res.json(), unsupported);
    }
  });

  test("malformed JSON, an empty JSON body, a non-object → 422", async () => {
    for (const payload of ["{bad", '{"name":"x",}', " ", "'x'"]) {
      const res = await send("POST", payload, "application/json");
      assert.equal(res.statusCode, 422, JSON.stringify(payload));
      assert.deepEqual(res.json(), notJson);
    }
    // Zero bytes are no body at all, which create needs.
    const empty = await send("POST", "", "application/json");
    assert.deepEqual(
      [empty.statusCode, empty.json()],
      [422, errorBody("unprocessable_entity", "body: is empty")],
    );
    for (const payload of ["[]", '"name"', "null", "42"]) {
      const res = await send("POST", payload, "application/json");
      assert.equal(res.statusCode, 422, payload);
      assert.deepEqual(res.json(), errorBody("unprocessable_entity", "body: must be an object"));
    }
  });

  test("a JSON body with a byte order mark, or a charset parameter, is accepted", async () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"bom"}')]);
    const res = await send("POST", bom, "application/json");
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().name, "bom");
    const withCharset = await send("POST", '{"name":"utf8"}', "application/json; charset=utf-8");
    assert.equal(withCharset.statusCode, 201, withCharset.body);
    assert.equal(withCharset.json().name, "utf8");
  });

  test("a URL with malformed percent-encoding → 400", async () => {
    const res = await testApp.app.inject({
      url: `${FORMS}/%E0%A4%A`,
      headers: { "api-key": fullKey, "x-request-id": "bad-url-1" },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), badUrl);
    assert.equal(res.headers["x-request-id"], "bad-url-1");
  });
});

describe("errors answered by a listening server", () => {
  let server: TestApp;
  let port: number;

  before(async () => {
    server = await buildTestApp({ bodyLimitBytes: BODY_LIMIT });
    await server.app.listen({ port: 0, host: "127.0.0.1" });
    port = (server.app.server.address() as net.AddressInfo).port;
  });

  after(async () => {
    await server?.close();
  });

  test("headers over 16 KB → 431 with the error body", async () => {
    const res = await sendRaw(
      port,
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`,
    );
    assert.equal(res.status, 431);
    assert.match(res.headers, /content-type: application\/json/);
    assert.deepEqual(
      JSON.parse(res.body),
      errorBody("headers_too_large", "headers: are larger than the server accepts"),
    );
  });

  test("a request that is not valid HTTP → 400 with the error body", async () => {
    const res = await sendRaw(
      port,
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n",
    );
    assert.equal(res.status, 400);
    assert.deepEqual(JSON.parse(res.body), errorBody("bad_request", "request: is not valid HTTP"));
  });

  test("a URL with malformed percent-encoding → 400 with the error body", async () => {
    const res = await fetch(`http://127.0.0.1:${port}${FORMS}/%E0%A4%A`, {
      headers: { "api-key": fullKey },
    });
    assert.equal(res.status, 400);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(await res.json(), badUrl);
  });

  test("a body without a content type → 415", async () => {
    const status = await requestOverHttp(
      port,
      "POST",
      FORMS,
      { "api-key": fullKey },
      '{"name":"no type"}',
    );
    assert.equal(status.status, 415);
    assert.deepEqual(JSON.parse(status.text), unsupported);
  });
});
