// The intake keeps forms that need only their row (src/intake/intake-admission.ts) and stores
// their submissions in one statement that checks the form's version. Each test first posts once,
// so that the form is kept, then changes the form (through this app or another one on the same
// store) and checks that the next submission is decided on the form as changed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { changePlan } from "../../src/admin/admin.service.ts";
import { newId } from "../../src/ids.ts";
import { findIntakeForm, type IntakeForm } from "../../src/intake/intake.repository.ts";
import { storeWhileFormUnchanged } from "../../src/intake/submission-store.repository.ts";
import { foldSubmissionCounts } from "../../src/submissions/submission-counts.repository.ts";
import { refreshFormSummary } from "../../src/webhooks/webhooks.repository.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { BROWSER_ACCEPT, countOf, newForm, post, storedSubmissions } from "./intake-fixtures.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;
/** A second instance on the same store, with a cache of its own. */
let other: Awaited<ReturnType<typeof buildTestApp>>;

before(async () => {
  built = await buildTestApp({ intakeRateLimitMax: 1000 });
  other = await buildTestApp({ intakeRateLimitMax: 1000 });
});

after(async () => {
  await built.close();
  await other.close();
  await closeTestDatabase();
});

const CLOSED = { error: { code: "form_closed", message: "form: is closed" } };

test("a form kept by the intake takes submissions in one statement: stored and counted, spam stored uncounted", async () => {
  const { id } = await newForm(built.app);
  const first = await post(built.app, id, { body: "a=1" });
  const second = await post(built.app, id, { body: "a=2" });
  const spam = await post(built.app, id, { body: "a=3&_gotcha=x" });
  assert.deepEqual(
    [first.status, second.status, spam.status, first.body.ok, second.body.ok],
    [201, 201, 201, true, true],
  );
  const stored = await storedSubmissions(built.db, id);
  assert.deepEqual(
    stored.map((s) => [s.id, s.isSpam, s.spamReason, s.answers]),
    [
      [first.body.id, false, null, [{ id: "a", label: "a", value: "1" }]],
      [second.body.id, false, null, [{ id: "a", label: "a", value: "2" }]],
      [spam.body.id, true, "honeypot", [{ id: "a", label: "a", value: "3" }]],
    ],
  );
  assert.equal(await countOf(built.db, id), 2);
});

test("a form closed on this instance after it was kept: the next submission is refused, nothing stored", async () => {
  const { id, api } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  await api.updateOk(id, { isClosed: true });
  const refused = await post(built.app, id, { body: "a=2" });
  assert.deepEqual([refused.status, refused.body], [403, CLOSED]);
  assert.equal((await storedSubmissions(built.db, id)).length, 1);
  assert.equal(await countOf(built.db, id), 1);
});

test("a form closed through another instance after this one kept it: refused here at once", async () => {
  const { id, key } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  const closed = await other.app.inject({
    method: "PATCH",
    url: `/api/v1/forms/${id}`,
    headers: { "api-key": key, "content-type": "application/json" },
    payload: { isClosed: true },
  });
  assert.equal(closed.statusCode, 200);
  const refused = await post(built.app, id, { body: "a=2" });
  assert.deepEqual([refused.status, refused.body], [403, CLOSED]);
  assert.equal(await countOf(built.db, id), 1);
});

test("a form reopened after this instance refused it: taken again", async () => {
  const { id, api } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  await api.updateOk(id, { isClosed: true });
  assert.equal((await post(built.app, id, { body: "a=2" })).status, 403);
  await api.updateOk(id, { isClosed: false });
  assert.equal((await post(built.app, id, { body: "a=3" })).status, 201);
  assert.equal(await countOf(built.db, id), 2);
});

test("a limit of responses set after the form was kept is enforced on the next submission", async () => {
  const { id, api } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  await api.updateOk(id, { limitResponses: true, maxResponses: 1 });
  const refused = await post(built.app, id, { body: "a=2" });
  assert.deepEqual(
    [refused.status, refused.body],
    [
      403,
      { error: { code: "form_closed", message: "form: has reached its limit of 1 responses" } },
    ],
  );
  assert.equal(await countOf(built.db, id), 1);
});

test("an address blacklisted after the form was kept is refused; unlisted again, it is taken", async () => {
  const { id, api } = await newForm(built.app);
  const from = { remoteAddress: "203.0.113.9" };
  assert.equal((await post(built.app, id, { body: "a=1", ...from })).status, 201);
  await api.updateOk(id, { ipBlacklist: "203.0.113.9" });
  const refused = await post(built.app, id, { body: "a=2", ...from });
  assert.deepEqual(
    [refused.status, refused.body],
    [403, { error: { code: "forbidden", message: "address: may not submit to this form" } }],
  );
  // This instance now keeps the blacklisting form: its refusal is checked on the form as stored.
  await api.updateOk(id, { ipBlacklist: "" });
  assert.equal((await post(built.app, id, { body: "a=3", ...from })).status, 201);
  assert.equal(await countOf(built.db, id), 2);
});

test("notifications turned on after the form was kept: the next submission causes its email", async () => {
  const { id, api, key } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  await api.updateOk(id, { emailsToNotify: ["team@acme.test"] });
  const taken = await post(built.app, id, { body: "a=2" });
  assert.equal(taken.status, 201);
  const emails = await built.app.inject({
    url: `/api/v1/forms/${id}/submissions/${taken.body.id}/emails`,
    headers: { "api-key": key },
  });
  assert.deepEqual(
    emails.json().data.map((email: { to: string }) => email.to),
    ["team@acme.test"],
  );
});

test("the organization's plan changed after the form was kept: the next answer follows the new plan", async () => {
  const redirect = { useCustomRedirect: true, customSuccessUrl: "https://example.com/thanks" };
  const { id, organizationId } = await newForm(built.app, redirect, "paid");
  const browser = { body: "a=1", headers: { accept: BROWSER_ACCEPT } };
  const paid = await post(built.app, id, browser);
  assert.deepEqual([paid.status, paid.headers.location], [303, "https://example.com/thanks"]);
  await changePlan(built.db, organizationId, "free");
  const free = await post(built.app, id, browser);
  assert.deepEqual([free.status, free.headers.location], [303, `/f/${id}/thanks`]);
});

test("a form deleted after it was kept: the next submission is 404, nothing stored", async () => {
  const { id } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  await built.db.query("DELETE FROM forms WHERE id = $1", [id]);
  const missing = await post(built.app, id, { body: "a=2" });
  assert.deepEqual(
    [missing.status, missing.body],
    [404, { error: { code: "not_found", message: "form: not found" } }],
  );
  assert.deepEqual(await storedSubmissions(built.db, id), []);
});

/** Stores a submission to `form` as read earlier, as the intake's one statement does. */
async function storeAsKept(form: IntakeForm): Promise<boolean> {
  const submission = {
    id: newId("sub"),
    formId: form.id,
    organizationId: form.organizationId,
    isSpam: false,
    spamReason: null,
    answers: [{ id: "a", label: "a", value: "kept" }],
    files: [],
    searchText: "kept",
    meta: { ip: null, country: null, userAgent: null, referrer: null },
    createdAt: new Date(),
  };
  return storeWhileFormUnchanged(built.db, submission, form, { store: true, count: true }, null);
}

test("the fold of the counts into the form's row leaves a kept form current; a change of its webhooks does not", async () => {
  const { id } = await newForm(built.app);
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  const kept = await findIntakeForm(built.db, id, new Date());
  assert.ok(kept);
  while ((await foldSubmissionCounts(built.db, 500)) > 0) {}
  assert.equal(await storeAsKept(kept), true);
  // What notifications read of the form (webhookEnabled, webhookUrl) is in its settings.
  await refreshFormSummary(built.db, id);
  assert.equal(await storeAsKept(kept), false);
  assert.equal((await storedSubmissions(built.db, id)).length, 2);
  assert.equal(await countOf(built.db, id), 2);
});
