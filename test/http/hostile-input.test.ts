/**
 * Regressions found by the reliability suite (test/reliability/): each case is the smallest
 * request that showed the defect.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Client, client, errorOf, unprocessable } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

let testApp: TestApp;
let api: Client;
let fullKey: string;

before(async () => {
  testApp = await buildTestApp();
  ({ fullKey } = await createTenant("paid"));
  api = client(testApp.app, fullKey);
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

const post = (payload: Buffer) =>
  testApp.app.inject({
    method: "POST",
    url: "/api/v1/forms",
    headers: { "api-key": fullKey, "content-type": "application/json" },
    payload,
  });

test("an unknown member is named as sent, even with ~0 or ~1 in its name", async () => {
  const before = await api.total();
  for (const name of ["a~1b", "a~0b", "~1", "a/b"]) {
    const res = await api.create({ name: "x", [name]: 1 });
    assert.deepEqual(res.body, unprocessable(`${name}: is not allowed`));
  }
  assert.equal(await api.total(), before);
});

test("a body that is not UTF-8 is refused, not stored with U+FFFD in place of its bytes", async () => {
  const before = await api.total();
  for (const bytes of [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
    const payload = Buffer.concat([
      Buffer.from('{"name":"a'),
      Buffer.from(bytes),
      Buffer.from('"}'),
    ]);
    const res = await post(payload);
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(res.json(), unprocessable("body: is not valid UTF-8"));
  }
  assert.equal(await api.total(), before);
  // A leading byte order mark is still ignored.
  const bom = await post(
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"ok"}')]),
  );
  assert.equal(bom.statusCode, 201, bom.body);
});

test("a query string that cannot be decoded → 400, not a search for its literal text", async () => {
  for (const query of ["search=%FF", "search=%ED%A0%80", "search=100%", "search=%E0%A4%A"]) {
    const res = await api.list(`?${query}`);
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 400, body: errorOf("bad_request", "url: is not valid percent-encoding") },
      query,
    );
  }
  const literal = await api.list(`?search=${encodeURIComponent("100%")}`);
  assert.equal(literal.status, 200);
});

test("a string that starts with U+FEFF is refused: the embedded store would drop it", async () => {
  const before = await api.total();
  const created = await api.create({ name: "\uFEFFname" });
  assert.deepEqual(
    { status: created.status, body: created.body },
    { status: 422, body: errorOf("unprocessable_entity", "name: must not start with U+FEFF") },
  );
  const inside = await api.create({ name: "a\uFEFFb", tpHeader: "\uFEFFheader" });
  assert.deepEqual(
    inside.body,
    errorOf("unprocessable_entity", "tpHeader: must not start with U+FEFF"),
  );
  assert.equal(await api.total(), before);
  const kept = await api.createOk({ name: "a\uFEFFb" });
  assert.equal((await api.getOk(kept.id)).name, "a\uFEFFb");
});

test("an auto-close deadline in year 0000 is accepted (dates are valid from year 0000)", async () => {
  const deadline = {
    autoCloseEnabled: true,
    autoCloseDate: "0000-06-01",
    autoCloseTime: "00:00",
    autoCloseTimezone: "UTC",
  };
  const created = await api.create({ name: "year zero", ...deadline });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.isClosed, true, "a deadline long past closes the form at once");
  const form = await api.createOk({ name: "year zero later" });
  const updated = await api.update(form.id, deadline);
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.isClosed, true);
});

test("an auto-close deadline that falls after year 9999 in UTC is stored and kept open", async () => {
  const created = await api.createOk({
    name: "the last deadline",
    autoCloseEnabled: true,
    autoCloseDate: "9999-12-31",
    autoCloseTime: "23:59",
    autoCloseTimezone: "Pacific/Pago_Pago",
  });
  assert.equal(created.isClosed, false);
  assert.deepEqual(await api.getOk(created.id), created);
});

test("a query parameter on a route that reads none is refused by name, and nothing changes", async () => {
  const form = await api.createOk({ name: "queried" });
  const before = await api.total();
  const cases = [
    ["GET", `/api/v1/forms/${form.id}?x=1`, undefined, "x"],
    ["POST", "/api/v1/forms?page=2", { name: "not created" }, "page"],
    ["PATCH", `/api/v1/forms/${form.id}?name=y`, { name: "not renamed" }, "name"],
    ["DELETE", `/api/v1/forms/${form.id}?force`, undefined, "force"],
  ] as const;
  for (const [method, url, payload, name] of cases) {
    const res = await testApp.app.inject({
      method,
      url,
      headers: { "api-key": fullKey, ...(payload && { "content-type": "application/json" }) },
      ...(payload && { payload: JSON.stringify(payload) }),
    });
    assert.deepEqual(
      [res.statusCode, res.json()],
      [422, errorOf("unprocessable_entity", `${name}: is not a known parameter`)],
      `${method} ${url}`,
    );
  }
  assert.equal(await api.total(), before);
  assert.deepEqual(await api.getOk(form.id), form);
});

test("a parameter named like a member of Object.prototype is unknown, on list and get", async () => {
  const form = await api.createOk({ name: "prototype names" });
  const names = [
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "__defineGetter__",
  ];
  for (const path of ["/api/v1/forms", `/api/v1/forms/${form.id}`]) {
    for (const name of names) {
      const res = await testApp.app.inject({
        url: `${path}?${name}=x`,
        headers: { "api-key": fullKey },
      });
      assert.deepEqual(
        [res.statusCode, res.json()],
        [422, errorOf("unprocessable_entity", `${name}: is not a known parameter`)],
        `${path}?${name}=x`,
      );
    }
  }
});

test("a body sent to a route that does not exist is not read: 404, not 413 or 422", async () => {
  for (const payload of ["{", "x".repeat(2 * 1024 * 1024)]) {
    const res = await testApp.app.inject({
      method: "POST",
      url: "/api/v1/nowhere",
      headers: { "content-type": "application/json" },
      payload,
    });
    assert.deepEqual(
      [res.statusCode, res.json()],
      [404, errorOf("not_found", "route: POST /api/v1/nowhere does not exist")],
    );
  }
});
