import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { after, test } from "node:test";
import type { Queryable } from "../../src/db/database.ts";
import { spareCapacity } from "../../src/jobs/spare-capacity.ts";
import { outboxJson } from "../../src/notifications/event-outbox.repository.ts";
import { startEventRelay } from "../../src/notifications/event-relay.ts";
import type { SubmissionEvent } from "../../src/notifications/submission-events.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm, post } from "../intake/intake-fixtures.ts";
import { eventsWithoutQueue } from "../intake/test-implementations.ts";

after(closeTestDatabase);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The form's events still in the outbox. */
async function waiting(db: Queryable, formId: string) {
  const [row] = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM submission_events_outbox WHERE form_id = $1",
    [formId],
  );
  return row?.n;
}

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

const silentLog = { warn() {} };

/** A relay name of this test's own: no app's relay takes its events (for 5 s, see takeEvents). */
const RELAY = "relay-deferral-test";

/** `count` events of the form in the outbox for RELAY, as the intake's statement writes them. */
async function addEvents(db: Queryable, formId: string, count: number) {
  const now = new Date().toISOString();
  const event: SubmissionEvent = {
    form: {
      id: formId,
      name: "Deferred",
      plan: "free",
      settings: { emailsToNotify: ["owner@acme.test"] },
    } as SubmissionEvent["form"],
    submission: {
      id: "sub_AAAAAAAAAAAAAAAAAAAAAA",
      formId,
      isSpam: false,
      spamReason: null,
      answers: [],
      files: [],
      meta: { ip: null, country: null, userAgent: null, referrer: null },
      createdAt: now,
      updatedAt: now,
    },
    isSpam: false,
  };
  await db.query(
    `INSERT INTO submission_events_outbox (form_id, event, relay)
     SELECT $1, $2::text::jsonb, $3 FROM generate_series(1, $4)`,
    [formId, outboxJson(event), RELAY, count],
  );
}

/**
 * How many of the form's events wait, each time it changes, with the time it changed at (ms from
 * the start), until none wait or `boundMs` has passed.
 */
async function countsOverTime(db: Queryable, formId: string, boundMs: number) {
  const started = performance.now();
  const seen: [number, number][] = [];
  while (performance.now() - started < boundMs) {
    const n = (await waiting(db, formId)) ?? -1;
    if (seen.at(-1)?.[0] !== n) seen.push([n, performance.now() - started]);
    if (n === 0) break;
    await sleep(20);
  }
  return seen;
}

/** Requests in flight that saturate the instance, and a way to ease them. */
async function saturated() {
  const capacity = spareCapacity();
  const inFlight = Array.from({ length: 16 }, () => new EventEmitter());
  for (const response of inFlight) capacity.track(response);
  await sleep(250);
  const ease = () => {
    for (const response of inFlight) response.emit("close");
  };
  return { capacity, ease };
}

/** Forms of a closed app: only a relay of the test's own takes RELAY's events. */
async function formsWithoutRelay(count: number) {
  const built = await buildTestApp();
  const forms: string[] = [];
  for (let i = 0; i < count; i++) {
    forms.push((await newForm(built.app, { emailsToNotify: ["owner@acme.test"] })).id);
  }
  await built.close();
  return { db: built.db, forms };
}

const events = { ...eventsWithoutQueue({ mailFrom: "formdeck@acme.test" }), relay: RELAY };

/** How many of the forms' events wait in all, each time it changes (see countsOverTime). */
async function allCountsOverTime(db: Queryable, formIds: string[], boundMs: number) {
  const started = performance.now();
  const seen: [number, number][] = [];
  while (performance.now() - started < boundMs) {
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM submission_events_outbox WHERE form_id = ANY($1)",
      [formIds],
    );
    const n = row?.n ?? -1;
    if (seen.at(-1)?.[0] !== n) seen.push([n, performance.now() - started]);
    if (n === 0) break;
    await sleep(20);
  }
  return seen;
}

for (const bound of ["instance", "form"] as const) {
  test(`while requests saturate the instance a pass relays one batch of 50, unless more events wait than it may defer (the ${bound}'s bound); eased, it relays them all at once`, async () => {
    const { db, forms } = await formsWithoutRelay(1);
    const formId = forms[0] as string;
    const { capacity, ease } = await saturated();
    const bounds =
      bound === "instance"
        ? { maxDeferred: 40, maxDeferredOfForm: 1_000 }
        : { maxDeferred: 1_000, maxDeferredOfForm: 40 };
    const relay = startEventRelay(db, events, silentLog, capacity, bounds);
    try {
      // 110 wait, more than the 40 it may defer: the first pass (once its wait of a second ends)
      // relays a batch, and a second since 60 still wait, then stops with 10 left (not more
      // than 40): those go the next pass, which waits its second after the first one's end.
      // (Counts are seen late, never early: the bounds below allow for that.)
      await addEvents(db, formId, 110);
      for (let i = 0; i < 110; i++) relay.wake(formId);
      const counts = await countsOverTime(db, formId, 4_500);
      const at = (n: number) => counts.find(([count]) => count === n)?.[1] ?? Number.NaN;
      assert.deepEqual(
        counts.map(([n]) => n).filter((n) => n !== 60),
        [110, 10, 0],
        `counts over time: ${JSON.stringify(counts)}`,
      );
      assert.ok(at(10) < 1_900, `the first pass took 100: ${JSON.stringify(counts)}`);
      assert.ok(at(0) >= 1_950, `the next pass came later: ${JSON.stringify(counts)}`);

      // Eased: a pass relays every batch at once.
      ease();
      await sleep(250);
      await addEvents(db, formId, 120);
      for (let i = 0; i < 120; i++) relay.wake(formId);
      const eased = await countsOverTime(db, formId, 2_000);
      assert.deepEqual(eased.at(-1)?.[0], 0, `eased: ${JSON.stringify(eased)}`);
      assert.ok((eased.at(-1)?.[1] ?? 2_000) < 600, `eased: ${JSON.stringify(eased)}`);
      const [records] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM email_records WHERE form_id = $1",
        [formId],
      );
      assert.equal(records?.n, 230, "every event relayed into its owner email record");
    } finally {
      await relay.stop();
      capacity.stop();
    }
  });
}

test("while requests saturate the instance, events spread over forms each within the form's bound wait: a batch a pass", async () => {
  const { db, forms } = await formsWithoutRelay(3);
  const { capacity } = await saturated();
  const relay = startEventRelay(db, events, silentLog, capacity, {
    maxDeferred: 1_000,
    maxDeferredOfForm: 40,
  });
  try {
    // 110 in all, 36 or 37 a form: no bound is passed, so each pass relays one batch of 50.
    const perForm = [36, 37, 37];
    for (const [i, formId] of forms.entries()) await addEvents(db, formId, perForm[i] ?? 0);
    for (const [i, formId] of forms.entries()) {
      for (let n = 0; n < (perForm[i] ?? 0); n++) relay.wake(formId);
    }
    const counts = await allCountsOverTime(db, forms, 4_500);
    assert.deepEqual(
      counts.map(([n]) => n),
      [110, 60, 10, 0],
      `counts over time: ${JSON.stringify(counts)}`,
    );
    // Each pass waits its second after the one before ends (counts are seen late, never early).
    const at = (n: number) => counts.find(([count]) => count === n)?.[1] ?? Number.NaN;
    assert.ok(at(10) >= 1_950, `a pass a second: ${JSON.stringify(counts)}`);
    assert.ok(at(0) >= 2_950, `a pass a second: ${JSON.stringify(counts)}`);
  } finally {
    await relay.stop();
    capacity.stop();
  }
});

test("a read relays every waiting event of its form, past one transaction's share, and leaves the other forms' events", async () => {
  const built = await buildTestApp();
  const read = await newForm(built.app, { emailsToNotify: ["owner@acme.test"] });
  const other = await newForm(built.app, { emailsToNotify: ["owner@acme.test"] });
  await built.close();
  const events = { ...eventsWithoutQueue({ mailFrom: "formdeck@acme.test" }), relay: RELAY };
  const relay = startEventRelay(built.db, events, silentLog);
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
