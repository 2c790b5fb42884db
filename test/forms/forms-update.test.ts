import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import {
  assertNoSecret,
  assertUpdateRefused,
  type Body,
  type Client,
  client,
  listItemOf,
  MISSING_ID,
  NOT_FOUND,
  TIMESTAMP,
  unprocessable,
} from "./form-fixtures.ts";

let close: () => Promise<void>;
let db: Awaited<ReturnType<typeof buildTestApp>>["db"];
let api: Client;
let other: Client;

before(async () => {
  const built = await buildTestApp();
  close = built.close;
  db = built.db;
  api = client(built.app, (await createTenant("free")).fullKey);
  other = client(built.app, (await createTenant("free")).fullKey);
});

after(async () => {
  await close();
  await closeTestDatabase();
});

const later = (a: string, b: string) => Date.parse(b) > Date.parse(a);

/** Asserts `updated` is `previous` with only `changes` and a later `updatedAt`. */
function assertOnly(updated: Body, previous: Body, changes: Body) {
  assert.match(updated.updatedAt, TIMESTAMP);
  assert.ok(later(previous.updatedAt, updated.updatedAt), "updatedAt must move forward");
  assert.deepEqual(updated, { ...previous, ...changes, updatedAt: updated.updatedAt });
}

describe("update", () => {
  test("changes only the members sent, and answers the whole record", async () => {
    const created = await api.createOk({
      name: "Partial",
      type: "hosted",
      emailsToNotify: ["a@example.com"],
      tpHeader: "Old header",
      maxResponses: 10,
      submissionStorageDuration: "60",
    });
    const changes = { name: "Partial, renamed", tpHeader: "New header", limitResponses: true };
    const res = await api.update(created.id, changes);
    assert.equal(res.status, 200, res.text);
    assertOnly(res.body, created, changes);
    assert.equal(res.body.createdAt, created.createdAt);
    assert.deepEqual(await api.getOk(created.id), res.body);
    assert.deepEqual(await api.listed(created.id, "Partial, renamed"), listItemOf(res.body));

    const more = {
      maxResponses: 20,
      submissionStorageDuration: "forever",
      emailsToNotify: [],
      customHoneypot: "hp",
    };
    assertOnly(await api.updateOk(created.id, more), res.body, more);
  });

  test("PATCH with {} answers 200 with the record unchanged but for updatedAt", async () => {
    const created = await api.createOk({ name: "Empty patch", tpMessage: "keep me" });
    const res = await api.update(created.id, {});
    assert.equal(res.status, 200, res.text);
    assertOnly(res.body, created, {});
    assert.deepEqual(await api.getOk(created.id), res.body);
  });

  test("updatedAt strictly increases, even for updates in the same millisecond", async (t) => {
    // The service's clock stands still: every request below is answered at the same instant.
    t.mock.timers.enable({ apis: ["Date"], now: Date.now() });
    const created = await api.createOk({ name: "Quick" });
    const first = await api.updateOk(created.id, { tpHeader: "1" });
    const second = await api.updateOk(created.id, { tpHeader: "2" });
    assert.ok(later(created.updatedAt, first.updatedAt), `${first.updatedAt} after create`);
    assert.ok(later(first.updatedAt, second.updatedAt), `${second.updatedAt} after the first`);
    assertOnly(second, first, { tpHeader: "2" });
    // Even a clock that steps back does not move updatedAt back.
    t.mock.timers.setTime(Date.now() - 10_000);
    assertOnly(await api.updateOk(created.id, { tpHeader: "3" }), second, { tpHeader: "3" });
  });

  test("updatedAt strictly increases for two immediate updates on the real clock", async () => {
    const created = await api.createOk({ name: "Quick, real clock" });
    const first = await api.updateOk(created.id, { tpHeader: "1" });
    const second = await api.updateOk(created.id, { tpHeader: "2" });
    assertOnly(first, created, { tpHeader: "1" });
    assertOnly(second, first, { tpHeader: "2" });
  });

  test("isClosed opens and closes a form: open → closed → open", async () => {
    const open = await api.createOk({ name: "Switch" });
    assert.equal(open.isClosed, false);
    const closed = await api.updateOk(open.id, { isClosed: true });
    assertOnly(closed, open, { isClosed: true });
    assert.deepEqual(await api.getOk(open.id), closed);
    assert.deepEqual(await api.listed(open.id, "Switch"), listItemOf(closed));
    const closedAgain = await api.updateOk(open.id, { isClosed: true });
    assertOnly(closedAgain, closed, {});
    const reopened = await api.updateOk(open.id, { isClosed: false });
    assertOnly(reopened, closedAgain, { isClosed: false });
    assert.deepEqual(await api.getOk(open.id), reopened);
    assert.deepEqual(await api.listed(open.id, "Switch"), listItemOf(reopened));
  });

  test("maxResponses: null is refused on update: the spec has a number there", async () => {
    const created = await api.createOk({ name: "Capped", limitResponses: true, maxResponses: 5 });
    await assertUpdateRefused(
      api,
      created.id,
      { maxResponses: null },
      unprocessable("maxResponses: must be an integer"),
    );
    assertOnly(await api.updateOk(created.id, { maxResponses: 6 }), created, { maxResponses: 6 });
  });

  test("the captcha secret can be set on update, is kept, and is never returned", async () => {
    const stored = async (id: string) =>
      (
        await db.query<{ s: string }>("SELECT captcha_secret AS s FROM forms WHERE id = $1", [id])
      )[0]?.s;
    const created = await api.createOk({ name: "Secret later" });
    assert.equal(await stored(created.id), "");
    const secret = "update-secret-5c2e8d";
    const res = await api.update(created.id, {
      providerCaptchaEnabled: true,
      providerCaptchaSecretKey: secret,
    });
    assert.equal(res.status, 200, res.text);
    assertNoSecret(res, secret);
    assertOnly(res.body, created, { providerCaptchaEnabled: true });
    assert.equal(await stored(created.id), secret);
    assertNoSecret(await api.get(created.id), secret);
    assertNoSecret(await api.list("?search=Secret%20later"), secret);
    await api.updateOk(created.id, { name: "Secret later, renamed" });
    assert.equal(await stored(created.id), secret, "an update that omits it keeps it");
    await api.updateOk(created.id, { providerCaptchaSecretKey: "" });
    assert.equal(await stored(created.id), "", "an empty secret clears it");
  });
});

describe("404 for a form the key's organization does not have", () => {
  test("an unknown id of the right shape", async () => {
    const res = await api.update(MISSING_ID, { name: "x" });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 404, body: NOT_FOUND });
    const got = await api.get(MISSING_ID);
    assert.deepEqual({ status: got.status, body: got.body }, { status: 404, body: NOT_FOUND });
  });

  test("another organization's form: the same answer, and that form unchanged", async () => {
    const theirs = await other.createOk({ name: "Not yours", tpHeader: "theirs" });
    for (const body of [{ name: "hijacked" }, { isClosed: true }, {}]) {
      const res = await api.update(theirs.id, body);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 404, body: NOT_FOUND });
    }
    const got = await api.get(theirs.id);
    assert.deepEqual({ status: got.status, body: got.body }, { status: 404, body: NOT_FOUND });
    assert.deepEqual(await other.getOk(theirs.id), theirs);
    assert.equal((await api.list("?search=Not%20yours")).body.meta.total, 0);
  });

  const ODD_IDS: [string, string][] = [
    ["a path", "../x"],
    ["a path to a real route", "../forms"],
    ["a 10 kB id", `form_${"A".repeat(10_240)}`],
    ["SQL text", "form_' OR '1'='1"],
    ["SQL text 2", "1; DROP TABLE forms; --"],
    ["Unicode", "förm_✓_日本語_😀"],
    ["a percent sign", "100%"],
    ["spaces", "   "],
  ];
  for (const [what, id] of ODD_IDS) {
    test(`an odd id: ${what}`, async () => {
      const mine = await api.createOk({ name: `Odd id neighbour: ${what}` });
      const res = await api.update(id, { name: "x" });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 404, body: NOT_FOUND });
      const got = await api.get(id);
      assert.deepEqual({ status: got.status, body: got.body }, { status: 404, body: NOT_FOUND });
      assert.deepEqual(await api.getOk(mine.id), mine);
    });
  }

  test("a refused body on a missing form is a 422: the shape is checked first", async () => {
    const res = await api.update(MISSING_ID, { name: "" });
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 422, body: unprocessable("name: must not be empty") },
    );
  });

  test("concurrent updates of one form all apply: none is lost, each answer is a stored state", async () => {
    const created = await api.createOk({ name: "Contended" });
    // Each update writes a different member, so a lost update shows as a missing member. Those
    // with an auto-close member take the read-then-write path, the others (isClosed included)
    // the one-statement path: they interleave here.
    const members = [
      { tpHeader: "header" },
      { tpMessage: "message" },
      { tpButtonText: "button" },
      { seoTitle: "title" },
      { seoDescription: "description" },
      { customHoneypot: "honeypot" },
      { respondentEmailFromName: "from" },
      { respondentEmailSubject: "subject" },
      { allowedDomains: "example.com" },
      { allowedCountries: "DE" },
      { limitResponses: true },
      { removeServiceBranding: true },
    ];
    const changes = members.map((change, i) =>
      i % 2 ? { ...change, autoCloseTimezone: "UTC" } : { ...change, isClosed: false },
    );
    const answers = await Promise.all(changes.map((change) => api.update(created.id, change)));
    assert.deepEqual(
      answers.map((res) => res.status),
      changes.map(() => 200),
    );
    const stored = await api.getOk(created.id);
    assert.deepEqual(stored, {
      ...created,
      ...Object.assign({}, ...changes),
      updatedAt: stored.updatedAt,
    });
    const times = answers.map((res) => res.body.updatedAt as string).sort();
    assert.equal(new Set(times).size, changes.length, "every update has its own updatedAt");
    assert.equal(stored.updatedAt, times.at(-1));
  });

  test("an update of a form deleted meanwhile answers 404 and recreates nothing", async () => {
    const created = await api.createOk({ name: "Deleted meanwhile" });
    const [updated] = await Promise.all([
      api.update(created.id, { name: "too late?" }),
      db.query("DELETE FROM forms WHERE id = $1", [created.id]),
    ]);
    assert.ok([200, 404].includes(updated.status), updated.text);
    if (updated.status === 404) assert.deepEqual(updated.body, NOT_FOUND);
    assert.deepEqual((await api.get(created.id)).body, NOT_FOUND);
  });
});
