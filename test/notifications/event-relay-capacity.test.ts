import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { after, test } from "node:test";
import type { Queryable } from "../../src/db/database.ts";
import { spareCapacity } from "../../src/jobs/spare-capacity.ts";
import { startEventRelay } from "../../src/notifications/event-relay.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm, post } from "../intake/intake-fixtures.ts";
import { addEvents, RELAY, relayEvents, silentLog, sleep, waiting } from "./relay-fixtures.ts";

after(closeTestDatabase);

/** Waits (at most 5 s) until the form's events are relayed; resolves when, by the clock. */
async function relayedAt(db: Queryable, formId: string) {
  const deadline = performance.now() + 5_000;
  while ((await waiting(db, formId)) !== 0) {
    if (performance.now() > deadline) assert.fail("the relay left the form's events");
    await sleep(20);
  }
  return performance.now();
}

const emailStatuses = async (db: Queryable, formId: string) =>
  (
    await db.query<{ submissionId: string; status: string }>(
      `SELECT submission_id AS "submissionId", status FROM email_records WHERE form_id = $1
        ORDER BY submission_id`,
      [formId],
    )
  ).map((row) => `${row.submissionId} ${row.status}`);

test("while requests saturate the instance the relay waits (a second at most), the API's reads do not, and it relays as soon as they ease", async () => {
  const capacity = spareCapacity();
  // 16 requests in flight, sampled before the app starts: the relay's first pass waits.
  const inFlight = Array.from({ length: 16 }, () => new EventEmitter());
  for (const response of inFlight) capacity.track(response);
  await sleep(250);
  const built = await buildTestApp({}, { capacity });
  try {
    const read = await newForm(built.app, { emailsToNotify: ["read@acme.test"] });
    const left = await newForm(built.app, { emailsToNotify: ["left@acme.test"] });
    const started = performance.now();
    const posted: Record<string, string[]> = { [read.id]: [], [left.id]: [] };
    for (const form of [read, left, read, left]) {
      const res = await post(built.app, form.id, { body: "a=1" });
      assert.equal(res.status, 201);
      posted[form.id]?.push(res.body.id);
    }
    assert.equal(await waiting(built.db, read.id), 2, "saturated: the relay has not taken them");
    assert.equal(await waiting(built.db, left.id), 2);

    // The emails route relays the form's events itself, without waiting.
    const submissionId = posted[read.id]?.[0] as string;
    const emails = await built.app.inject({
      url: `/api/v1/forms/${read.id}/submissions/${submissionId}/emails`,
      headers: { "api-key": read.key },
    });
    assert.equal(emails.statusCode, 200);
    assert.deepEqual(
      emails.json().data.map((email: { to: string; status: string }) => [email.to, email.status]),
      [["read@acme.test", "skipped"]],
    );
    assert.equal(await waiting(built.db, read.id), 0);
    assert.equal(await waiting(built.db, left.id), 2, "the other form's events still wait");

    // Still saturated: the relay's wait ends at its bound, and it takes them.
    const bounded = (await relayedAt(built.db, left.id)) - started;
    assert.ok(bounded < 2_500, `relayed ${bounded} ms after the first post, saturated`);
    assert.deepEqual(
      await emailStatuses(built.db, left.id),
      (posted[left.id] ?? []).toSorted().map((id) => `${id} skipped`),
    );

    // Eased: an event stored while saturated goes at the next sample, not at the bound.
    const last = await post(built.app, left.id, { body: "a=2" });
    assert.equal(last.status, 201);
    const eased = performance.now();
    for (const response of inFlight) response.emit("close");
    const afterEase = (await relayedAt(built.db, left.id)) - eased;
    assert.ok(afterEase < 600, `relayed ${afterEase} ms after requests eased`);
    assert.equal((await emailStatuses(built.db, left.id)).length, 3);
  } finally {
    await built.close();
    capacity.stop();
  }
});

test("a read relays every waiting event of its form, past one transaction's share, and leaves the other forms' events", async () => {
  const built = await buildTestApp();
  const read = await newForm(built.app, { emailsToNotify: ["owner@acme.test"] });
  const other = await newForm(built.app, { emailsToNotify: ["owner@acme.test"] });
  await built.close();
  const relay = startEventRelay(built.db, relayEvents, silentLog);
  // Its passes stopped, so that only the read relays anything here.
  await relay.stop();
  try {
    await addEvents(built.db, read.id, 1_201);
    await addEvents(built.db, other.id, 3);
    await relay.relayForm(read.id);
    const counts = await built.db.query<{ formId: string; waiting: number; records: number }>(
      `SELECT f.id AS "formId",
              (SELECT count(*)::int FROM submission_events_outbox o WHERE o.form_id = f.id) AS waiting,
              (SELECT count(*)::int FROM email_records e WHERE e.form_id = f.id) AS records
         FROM forms f WHERE f.id = ANY($1) ORDER BY f.id = $2 DESC`,
      [[read.id, other.id], read.id],
    );
    assert.deepEqual(counts, [
      { formId: read.id, waiting: 0, records: 1_201 },
      { formId: other.id, waiting: 3, records: 0 },
    ]);
  } finally {
    await built.db.query("DELETE FROM submission_events_outbox WHERE relay = $1", [RELAY]);
  }
});
