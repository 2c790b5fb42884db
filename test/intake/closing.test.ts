import assert from "node:assert/strict";
import { test } from "node:test";
import { lockForm } from "../../src/intake/intake.repository.ts";
import {
  changeSubmissionCount,
  foldSubmissionCounts,
} from "../../src/submissions/submission-counts.repository.ts";
import { unprocessable } from "../forms/form-fixtures.ts";
import { useTestApp } from "../helpers.ts";
import { countOf, newForm, post, storedSubmissions } from "./intake-fixtures.ts";

// The concurrency test posts 50 times from one address.
const built = useTestApp({ intakeRateLimitMax: 1000 });

test("maxResponses is exact under 50 concurrent submissions: 10 accepted, 40 form_closed", async () => {
  const { id, api } = await newForm(built.app, { limitResponses: true, maxResponses: 10 });
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => post(built.app, id, { body: `n=${i}` })),
  );
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(40).fill(403)]);
  for (const refused of answers.filter((a) => a.status === 403)) {
    assert.deepEqual(refused.body, {
      error: { code: "form_closed", message: "form: has reached its limit of 10 responses" },
    });
  }
  const stored = await storedSubmissions(built.db, id);
  assert.equal(stored.length, 10);
  assert.deepEqual(
    stored.map((s) => s.id).sort(),
    answers
      .filter((a) => a.status === 201)
      .map((a) => a.body.id)
      .sort(),
  );
  assert.equal(await countOf(built.db, id), 10);
  const form = await api.getOk(id);
  assert.equal(form.isClosed, true);
  assert.equal((await api.listed(id, "intake test"))?.submissions, 10);
});

test("the limit closes the form in every read; raising it or turning it off reopens", async () => {
  const { id, api } = await newForm(built.app, { limitResponses: true, maxResponses: 2 });
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  let item = await api.listed(id, "intake test");
  assert.deepEqual([item?.isClosed, item?.submissions], [false, 1]);
  assert.equal((await post(built.app, id, { body: "a=2" })).status, 201);
  item = await api.listed(id, "intake test");
  assert.deepEqual([item?.isClosed, item?.submissions], [true, 2]);
  assert.equal((await api.getOk(id)).isClosed, true);
  // An unrelated update answers the record as closed too.
  assert.equal((await api.updateOk(id, { name: "intake test 2" })).isClosed, true);

  const reopen = await api.update(id, { isClosed: false });
  assert.deepEqual(
    { status: reopen.status, body: reopen.body },
    {
      status: 422,
      body: unprocessable(
        "isClosed: the form has reached its limit of 2 responses; raise maxResponses or turn limitResponses off to reopen it",
      ),
    },
  );
  assert.equal((await api.getOk(id)).isClosed, true, "a refused update changes nothing");
  const raised = await api.updateOk(id, { isClosed: false, maxResponses: 3 });
  assert.equal(raised.isClosed, false);
  assert.equal((await post(built.app, id, { body: "a=3" })).status, 201);
  assert.equal((await api.getOk(id)).isClosed, true);
  // Turning the limit off opens it at once; so does it in an earlier request, then reopening.
  assert.equal((await api.updateOk(id, { limitResponses: false })).isClosed, false);
  assert.equal((await post(built.app, id, { body: "a=4" })).status, 201);
  assert.equal(await countOf(built.db, id), 4);
});

test("reopening waits for a submission counted under the form's lock, and is refused once it reaches the limit", async () => {
  const { id, api } = await newForm(built.app, { limitResponses: true, maxResponses: 2 });
  assert.equal((await post(built.app, id, { body: "a=1" })).status, 201);
  await api.updateOk(id, { isClosed: true });
  // An intake accepting the second response, as storeSubmission does: the form locked, the
  // count raised; the reopening arrives meanwhile and must count that response.
  let reopening: ReturnType<typeof api.update> | undefined;
  await built.db.transaction(async (tx) => {
    assert.equal(await lockForm(tx, id), true);
    await changeSubmissionCount(tx, id, 1);
    reopening = api.update(id, { isClosed: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
  const reopen = await (reopening as ReturnType<typeof api.update>);
  assert.deepEqual(
    { status: reopen.status, body: reopen.body },
    {
      status: 422,
      body: unprocessable(
        "isClosed: the form has reached its limit of 2 responses; raise maxResponses or turn limitResponses off to reopen it",
      ),
    },
  );
  const form = await api.getOk(id);
  assert.equal(form.isClosed, true);
  assert.equal(await countOf(built.db, id), 2);
});

test("a manually closed form at its limit reopens only with the limit raised", async () => {
  const { id, api } = await newForm(built.app, { limitResponses: true, maxResponses: 1 });
  await post(built.app, id, { body: "a=1" });
  await api.updateOk(id, { isClosed: true });
  assert.equal((await api.update(id, { isClosed: false })).status, 422);
  await api.updateOk(id, { limitResponses: false });
  // The manual switch still holds until it is turned off.
  assert.equal((await api.getOk(id)).isClosed, true);
  assert.equal((await api.updateOk(id, { isClosed: false })).isClosed, false);
});

test("spam does not count toward the limit or the count; moving spam changes it by one", async () => {
  const { id, api } = await newForm(built.app, { limitResponses: true, maxResponses: 1 });
  assert.equal((await post(built.app, id, { body: "a=1&_gotcha=bot" })).status, 201);
  assert.equal(await countOf(built.db, id), 0);
  assert.equal((await post(built.app, id, { body: "a=2" })).status, 201);
  assert.equal(await countOf(built.db, id), 1);
  await changeSubmissionCount(built.db, id, -1);
  assert.equal(await countOf(built.db, id), 0);
  assert.equal((await api.getOk(id)).isClosed, false);
  await changeSubmissionCount(built.db, id, 1);
  assert.equal((await api.getOk(id)).isClosed, true);
  assert.equal((await storedSubmissions(built.db, id)).length, 2);
});

test("folding moves the slots into forms.submissions without changing any count", async () => {
  const { id, api } = await newForm(built.app);
  for (let i = 0; i < 3; i++) await post(built.app, id, { body: `a=${i}` });
  const column = async () =>
    (
      await built.db.query<{ n: number }>("SELECT submissions AS n FROM forms WHERE id = $1", [id])
    )[0]?.n;
  assert.equal(await column(), 0);
  assert.equal(await countOf(built.db, id), 3);
  while ((await foldSubmissionCounts(built.db, 500)) > 0) {}
  assert.equal(await column(), 3);
  assert.equal(await countOf(built.db, id), 3);
  assert.deepEqual(
    await built.db.query("SELECT * FROM submission_count_slots WHERE form_id = $1", [id]),
    [],
  );
  assert.equal((await api.listed(id, "intake test"))?.submissions, 3);
  // Sorted by submissions, once folded, it comes before a form with none.
  const other = await api.createOk({ name: "intake test empty" });
  const sorted = await api.list("?sort=submissions");
  assert.deepEqual(
    sorted.body.data.map((f: { id: string }) => f.id),
    [id, other.id],
  );
});

test("sort=submissions orders by the exact count, folded or not, on every page", async () => {
  const { id: a, api } = await newForm(built.app);
  const b = (await api.createOk({ name: "intake test b" })).id;
  const c = (await api.createOk({ name: "intake test c" })).id;
  await post(built.app, b, { body: "x=1" });
  await post(built.app, b, { body: "x=2" });
  await post(built.app, a, { body: "x=1" });
  const ids = async (query: string) =>
    (await api.list(query)).body.data.map((f: { id: string }) => f.id);
  assert.deepEqual(await ids("?sort=submissions"), [b, a, c]);
  assert.deepEqual(
    [
      ...(await ids("?sort=submissions&pageSize=1&page=1")),
      ...(await ids("?sort=submissions&pageSize=1&page=2")),
      ...(await ids("?sort=submissions&pageSize=1&page=3")),
    ],
    [b, a, c],
  );
  // Folded, then one more for a: a ties b, and the higher id comes first.
  while ((await foldSubmissionCounts(built.db, 500)) > 0) {}
  await post(built.app, a, { body: "x=2" });
  const tie = [a, b].sort().reverse();
  assert.deepEqual(await ids("?sort=submissions"), [...tie, c]);
  // A move into spam lowers the count at once.
  await changeSubmissionCount(built.db, b, -1);
  assert.deepEqual(await ids("?sort=submissions"), [a, b, c]);
  assert.deepEqual(await ids("?sort=submissions&search=test%20b"), [b]);
});

test("deleting a form deletes its submissions and its count slots", async () => {
  const { id, key } = await newForm(built.app);
  await post(built.app, id, { body: "a=1" });
  const res = await built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${id}`,
    headers: { "api-key": key },
  });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(await storedSubmissions(built.db, id), []);
  assert.deepEqual(
    await built.db.query("SELECT * FROM submission_count_slots WHERE form_id = $1", [id]),
    [],
  );
});
