/**
 * HTTP details a client may send that are not about the forms: expectations, body-less requests
 * that still name a type, and compressed bodies.
 */
import assert from "node:assert/strict";
import type http from "node:http";
import type net from "node:net";
import { after, before, describe, test } from "node:test";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { type Client, client, errorOf, MISSING_ID, NOT_FOUND } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { requestOverHttp, sendRaw } from "../raw-http.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

const FORMS = "/api/v1/forms";
const expectationFailed = errorOf("expectation_failed", "Expect: only 100-continue is supported");
const bodyRequired = errorOf("unprocessable_entity", "body: is empty");
const encoded = errorOf(
  "unsupported_media_type",
  "Content-Encoding: is not supported; send the body uncompressed",
);

let testApp: TestApp;
let api: Client;
let fullKey: string;
let port: number;

before(async () => {
  testApp = await buildTestApp();
  ({ fullKey } = await createTenant());
  api = client(testApp.app, fullKey);
  await testApp.app.listen({ port: 0, host: "127.0.0.1" });
  port = (testApp.app.server.address() as net.AddressInfo).port;
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

/** A request through a real connection, with `body` sent as it is. */
const request = (method: string, path: string, headers: http.OutgoingHttpHeaders, body?: Buffer) =>
  requestOverHttp(port, method, path, headers, body);

describe("Expect", () => {
  test("an expectation other than 100-continue → 417 with the error body, nothing created", async () => {
    const before = await api.total();
    for (const expect of ["foo", "200-ok", "100-continued"]) {
      const res = await sendRaw(
        port,
        `POST ${FORMS} HTTP/1.1\r\nHost: localhost\r\napi-key: ${fullKey}\r\n` +
          `Expect: ${expect}\r\nContent-Type: application/json\r\nContent-Length: 12\r\n` +
          `X-Request-Id: expect-1\r\nConnection: close\r\n\r\n{"name":"x"}`,
      );
      assert.equal(res.status, 417, expect);
      assert.deepEqual(JSON.parse(res.body), expectationFailed);
      assert.match(res.headers, /\r\ncontent-type: application\/json; charset=utf-8\r\n/);
      assert.match(res.headers, /\r\nx-request-id: expect-1\r\n/);
    }
    assert.equal(await api.total(), before);
  });

  test("Expect: 100-continue is met, and the request is served", async () => {
    const res = await request(
      "POST",
      FORMS,
      { "api-key": fullKey, "content-type": "application/json", expect: "100-Continue" },
      Buffer.from('{"name":"continued"}'),
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(JSON.parse(res.text).name, "continued");
  });
});

describe("a request without a body", () => {
  test("is fine on every route whatever its Content-Type, with no body or Content-Length: 0", async () => {
    for (const type of ["application/json", "text/plain", undefined]) {
      for (const length of ["0", undefined]) {
        const headers = {
          "api-key": fullKey,
          ...(type && { "content-type": type }),
          ...(length && { "content-length": length }),
        };
        const label = `${type} ${length}`;
        const form = await api.createOk({ name: "body-less" });
        const listed = await request("GET", `${FORMS}?search=body-less`, headers);
        assert.equal(listed.status, 200, `${label} ${listed.text}`);
        const read = await request("GET", `${FORMS}/${form.id}`, headers);
        assert.deepEqual([read.status, JSON.parse(read.text)], [200, form], label);
        const deleted = await request("DELETE", `${FORMS}/${form.id}`, headers);
        assert.deepEqual([deleted.status, deleted.text], [204, ""], label);
        assert.deepEqual((await api.get(form.id)).body, NOT_FOUND, label);
        const missing = await request("DELETE", `${FORMS}/${MISSING_ID}`, headers);
        assert.deepEqual([missing.status, JSON.parse(missing.text)], [404, NOT_FOUND], label);
        // Create and update read a body: without one, that is what they say.
        const created = await request("POST", FORMS, headers);
        assert.deepEqual([created.status, JSON.parse(created.text)], [422, bodyRequired], label);
        const kept = await api.createOk({ name: "kept" });
        const updated = await request("PATCH", `${FORMS}/${kept.id}`, headers);
        assert.deepEqual([updated.status, JSON.parse(updated.text)], [422, bodyRequired], label);
        assert.deepEqual(await api.getOk(kept.id), kept);
      }
    }
  });

  test("a body of another type is still a 415", async () => {
    const res = await request(
      "DELETE",
      `${FORMS}/${MISSING_ID}`,
      { "api-key": fullKey, "content-type": "text/plain" },
      Buffer.from("x"),
    );
    assert.deepEqual(
      [res.status, JSON.parse(res.text)],
      [415, errorOf("unsupported_media_type", "Content-Type: must be application/json")],
    );
  });
});

describe("Content-Encoding", () => {
  const json = '{"name":"compressed"}';
  const bodies: [string, Buffer][] = [
    ["br", brotliCompressSync(json)],
    ["gzip", gzipSync(json)],
    ["deflate", deflateSync(json)],
    ["x-unknown", Buffer.from(json)],
    ["gzip, identity", gzipSync(json)],
    ["GZIP", gzipSync(json)],
  ];

  test("a body in any coding but identity → 415 naming Content-Encoding, nothing stored", async () => {
    const form = await api.createOk({ name: "not recompressed" });
    const before = await api.total();
    for (const [coding, body] of bodies) {
      const headers = {
        "api-key": fullKey,
        "content-type": "application/json",
        "content-encoding": coding,
      };
      const created = await request("POST", FORMS, headers, body);
      assert.deepEqual([created.status, JSON.parse(created.text)], [415, encoded], coding);
      assert.equal(created.headers["accept-encoding"], "identity", coding);
      const updated = await request("PATCH", `${FORMS}/${form.id}`, headers, body);
      assert.deepEqual([updated.status, JSON.parse(updated.text)], [415, encoded], coding);
    }
    assert.equal(await api.total(), before);
    assert.deepEqual(await api.getOk(form.id), form);
  });

  test("identity is no coding: the body is read as it is", async () => {
    const res = await request(
      "POST",
      FORMS,
      { "api-key": fullKey, "content-type": "application/json", "content-encoding": "identity" },
      Buffer.from(json),
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(JSON.parse(res.text).name, "compressed");
  });

  test("a coding announced for no body refuses nothing", async () => {
    const form = await api.createOk({ name: "deleted with a coding" });
    const res = await request("DELETE", `${FORMS}/${form.id}`, {
      "api-key": fullKey,
      "content-type": "application/json",
      "content-encoding": "gzip",
      "content-length": "0",
    });
    assert.equal(res.status, 204, res.text);
  });
});
