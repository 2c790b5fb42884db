import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Body, client, MISSING_ID, NOT_FOUND, unprocessable } from "../forms/form-fixtures.ts";
import { createTenant, useTestApp } from "../helpers.ts";
import {
  answersOf,
  recordOf,
  seedSubmissions,
  storedCounter,
  storedIds,
  submissionsClient,
} from "./submission-fixtures.ts";

const built = useTestApp();

const SUBMISSION_NOT_FOUND = { error: { code: "not_found", message: "submission: not found" } };
const MISSING_SUBMISSION = "sub_AAAAAAAAAAAAAAAAAAAAAA";

/** A tenant with one form and its clients. */
async function tenantWithForm() {
  const tenant = await createTenant();
  const form = await client(built.app, tenant.fullKey).createOk({ name: "Contact" });
  return {
    ...tenant,
    form,
    api: submissionsClient(built.app, tenant.fullKey),
    reader: submissionsClient(built.app, tenant.readKey),
  };
}

/** Sets the form's counter as the intake would have left it. */
async function setCounter(formId: string, value: number) {
  await built.db.query("UPDATE forms SET submissions = $2 WHERE id = $1", [formId, value]);
}

describe("get", () => {
  test("answers the whole record, answers in the order received, JSON values as sent", async () => {
    const { form, reader } = await tenantWithForm();
    const answers = answersOf({
      zeta: "last letter first",
      colors: ["red", "green"],
      count: 3,
      nested: { a: [1, null, true] },
      empty: "",
    });
    const meta = { ip: null, country: null, userAgent: "curl/8.0", referrer: null };
    const [row] = await seedSubmissions(built.db, form, [{ answers, meta }]);
    const res = await reader.get(form.id, row?.id as string);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, recordOf(row));
    assert.deepEqual(Object.keys(res.body), [
      "id",
      "formId",
      "isSpam",
      "spamReason",
      "answers",
      "files",
      "meta",
      "createdAt",
      "updatedAt",
    ]);
  });

  test("a spam submission carries its reason", async () => {
    const { form, reader } = await tenantWithForm();
    const [row] = await seedSubmissions(built.db, form, [
      { isSpam: true, spamReason: "captcha_unverified" },
    ]);
    const res = await reader.get(form.id, row?.id as string);
    assert.deepEqual(res.body, recordOf(row));
    assert.equal(res.body.spamReason, "captcha_unverified");
  });

  test("404: a missing form, another organization's, an id not of our shape, a missing submission", async () => {
    const mine = await tenantWithForm();
    const theirs = await tenantWithForm();
    const [their] = await seedSubmissions(built.db, theirs.form, [{}]);
    const otherForm = await client(built.app, mine.fullKey).createOk({ name: "Other" });
    const [elsewhere] = await seedSubmissions(built.db, otherForm, [{}]);
    const cases: [string, string, Body][] = [
      [MISSING_ID, MISSING_SUBMISSION, NOT_FOUND],
      [theirs.form.id, their?.id as string, NOT_FOUND],
      ["not-a-form", MISSING_SUBMISSION, NOT_FOUND],
      [mine.form.id, MISSING_SUBMISSION, SUBMISSION_NOT_FOUND],
      [mine.form.id, "sub_short", SUBMISSION_NOT_FOUND],
      [mine.form.id, `${MISSING_SUBMISSION}x`, SUBMISSION_NOT_FOUND],
      // A submission of another of the organization's forms is not this form's.
      [mine.form.id, elsewhere?.id as string, SUBMISSION_NOT_FOUND],
    ];
    for (const [formId, submissionId, expected] of cases) {
      const res = await mine.reader.get(formId, submissionId);
      assert.deepEqual([res.status, res.body], [404, expected], `${formId} ${submissionId}`);
    }
  });

  test("query parameters are refused by name", async () => {
    const { form, reader } = await tenantWithForm();
    const [row] = await seedSubmissions(built.db, form, [{}]);
    const res = await built.app.inject({
      url: `/api/v1/forms/${form.id}/submissions/${row?.id}?page=1`,
      headers: { "api-key": (await createTenant()).readKey },
    });
    assert.deepEqual(res.json(), unprocessable("page: is not a known parameter"));
    assert.equal((await reader.get(form.id, row?.id as string)).status, 200);
  });
});

describe("PATCH isSpam", () => {
  test("marking spam sets reason manual, moves updatedAt and takes one off the counter", async () => {
    const { form, api } = await tenantWithForm();
    const [row, other] = await seedSubmissions(built.db, form, [{}, {}]);
    await setCounter(form.id, 2);
    const res = await api.update(form.id, row?.id as string, { isSpam: true });
    assert.equal(res.status, 200, res.text);
    const { updatedAt, ...rest } = res.body;
    const { updatedAt: _before, ...unchanged } = recordOf(row);
    assert.deepEqual(rest, { ...unchanged, isSpam: true, spamReason: "manual" });
    assert.ok(Date.parse(updatedAt) > (row?.updatedAt.getTime() as number), updatedAt);
    assert.deepEqual((await api.get(form.id, row?.id as string)).body, res.body);
    assert.equal(await storedCounter(built.db, form.id), 1);
    const inbox = await api.listOk(form.id);
    assert.deepEqual(inbox.meta, { total: 1, totalInbox: 1, totalSpam: 1 });
    assert.deepEqual(
      inbox.data.map((s: Body) => s.id),
      [other?.id],
    );
    const spam = await api.listOk(form.id, { isSpam: "true" });
    assert.deepEqual(spam.data, [res.body]);
  });

  test("marking not spam clears the reason and adds one to the counter", async () => {
    const { form, api } = await tenantWithForm();
    const [row] = await seedSubmissions(built.db, form, [{ isSpam: true, spamReason: "domain" }]);
    await setCounter(form.id, 0);
    const res = await api.update(form.id, row?.id as string, { isSpam: false });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...recordOf(row),
      isSpam: false,
      spamReason: null,
      updatedAt: res.body.updatedAt,
    });
    assert.ok(Date.parse(res.body.updatedAt) > (row?.updatedAt.getTime() as number));
    assert.equal(await storedCounter(built.db, form.id), 1);
    assert.deepEqual((await api.listOk(form.id)).meta, { total: 1, totalInbox: 1, totalSpam: 0 });
  });

  test("asking for the state it is in changes nothing, not even the reason", async () => {
    const { form, api } = await tenantWithForm();
    const [spam, inbox] = await seedSubmissions(built.db, form, [{ isSpam: true }, {}]);
    await setCounter(form.id, 1);
    const same = await api.update(form.id, spam?.id as string, { isSpam: true });
    assert.deepEqual([same.status, same.body], [200, recordOf(spam)]);
    const again = await api.update(form.id, inbox?.id as string, { isSpam: false });
    assert.deepEqual([again.status, again.body], [200, recordOf(inbox)]);
    assert.equal(await storedCounter(built.db, form.id), 1);
  });

  test("concurrent moves of one submission change the counter once per actual move", async () => {
    const { form, api } = await tenantWithForm();
    const [row] = await seedSubmissions(built.db, form, [{}]);
    await setCounter(form.id, 1);
    const marks = await Promise.all(
      Array.from({ length: 10 }, () => api.update(form.id, row?.id as string, { isSpam: true })),
    );
    assert.deepEqual(
      marks.map((res) => [res.status, res.body.isSpam, res.body.spamReason]),
      Array(10).fill([200, true, "manual"]),
    );
    assert.equal(await storedCounter(built.db, form.id), 0);
    await Promise.all(
      Array.from({ length: 10 }, () => api.update(form.id, row?.id as string, { isSpam: false })),
    );
    assert.equal(await storedCounter(built.db, form.id), 1);
    assert.deepEqual((await api.listOk(form.id)).meta, { total: 1, totalInbox: 1, totalSpam: 0 });
  });

  test("a body other than {isSpam: boolean} is refused by name and changes nothing", async () => {
    const { form, api } = await tenantWithForm();
    const [row] = await seedSubmissions(built.db, form, [{}]);
    await setCounter(form.id, 1);
    const cases: [unknown, string][] = [
      [{}, "isSpam: is required"],
      [{ isSpam: "true" }, "isSpam: must be a boolean"],
      [{ isSpam: null }, "isSpam: must be a boolean"],
      [{ isSpam: true, answers: [] }, "answers: is not allowed"],
      [{ isSpam: true, spamReason: "manual" }, "spamReason: is not allowed"],
      [{ isSpam: true, id: "sub_x" }, "id: is read-only"],
      [[true], "body: must be an object"],
    ];
    for (const [body, message] of cases) {
      const res = await api.update(form.id, row?.id as string, body);
      assert.deepEqual([res.status, res.body], [422, unprocessable(message)], JSON.stringify(body));
    }
    assert.deepEqual((await api.get(form.id, row?.id as string)).body, recordOf(row));
    assert.equal(await storedCounter(built.db, form.id), 1);
  });

  test("404s, and another organization's submission is unchanged", async () => {
    const mine = await tenantWithForm();
    const theirs = await tenantWithForm();
    const [their] = await seedSubmissions(built.db, theirs.form, [{}]);
    for (const [formId, submissionId, expected] of [
      [theirs.form.id, their?.id as string, NOT_FOUND],
      [MISSING_ID, MISSING_SUBMISSION, NOT_FOUND],
      [mine.form.id, MISSING_SUBMISSION, SUBMISSION_NOT_FOUND],
      [mine.form.id, "sub_%2e%2e", SUBMISSION_NOT_FOUND],
    ] as const) {
      const res = await mine.api.update(formId, submissionId, { isSpam: true });
      assert.deepEqual([res.status, res.body], [404, expected], submissionId);
    }
    const unchanged = await theirs.api.get(theirs.form.id, their?.id as string);
    assert.deepEqual(unchanged.body, recordOf(their));
  });
});

describe("DELETE", () => {
  test("204, gone from the store and the totals; the form's counter keeps counting it", async () => {
    const { form, api } = await tenantWithForm();
    const [gone, kept] = await seedSubmissions(built.db, form, [{}, {}]);
    await setCounter(form.id, 2);
    const res = await api.remove(form.id, gone?.id as string);
    assert.deepEqual([res.status, res.text], [204, ""]);
    assert.deepEqual(await storedIds(built.db, form.id), [kept?.id]);
    assert.equal(await storedCounter(built.db, form.id), 2);
    assert.deepEqual((await api.listOk(form.id)).meta, { total: 1, totalInbox: 1, totalSpam: 0 });
    const again = await api.remove(form.id, gone?.id as string);
    assert.deepEqual([again.status, again.body], [404, SUBMISSION_NOT_FOUND]);
    assert.deepEqual([(await api.get(form.id, gone?.id as string)).status], [404]);
  });

  test("404s leave every submission where it was", async () => {
    const mine = await tenantWithForm();
    const theirs = await tenantWithForm();
    const [their] = await seedSubmissions(built.db, theirs.form, [{}]);
    const [own] = await seedSubmissions(built.db, mine.form, [{}]);
    for (const [formId, submissionId, expected] of [
      [theirs.form.id, their?.id as string, NOT_FOUND],
      [mine.form.id, their?.id as string, SUBMISSION_NOT_FOUND],
      [MISSING_ID, own?.id as string, NOT_FOUND],
      ["form_short", own?.id as string, NOT_FOUND],
    ] as const) {
      const res = await mine.api.remove(formId, submissionId);
      assert.deepEqual([res.status, res.body], [404, expected], `${formId} ${submissionId}`);
    }
    assert.deepEqual(await storedIds(built.db, theirs.form.id), [their?.id]);
    assert.deepEqual(await storedIds(built.db, mine.form.id), [own?.id]);
  });
});

test("deleting a form deletes its submissions and their counts", async () => {
  const { form, fullKey, api } = await tenantWithForm();
  await seedSubmissions(built.db, form, [{}, { isSpam: true }, {}]);
  const other = await client(built.app, fullKey).createOk({ name: "Stays" });
  const [stays] = await seedSubmissions(built.db, other, [{}]);
  const res = await built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${form.id}`,
    headers: { "api-key": fullKey },
  });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(await storedIds(built.db, form.id), []);
  const counts = await built.db.query("SELECT * FROM submission_counts WHERE form_id = $1", [
    form.id,
  ]);
  assert.deepEqual(counts, []);
  assert.deepEqual((await api.list(form.id)).body, NOT_FOUND);
  assert.deepEqual(await storedIds(built.db, other.id), [stays?.id]);
  assert.deepEqual((await api.listOk(other.id)).meta, { total: 1, totalInbox: 1, totalSpam: 0 });
});
