import assert from "node:assert/strict";
import { after, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import type { Queryable } from "../../src/db/database.ts";
import type { JobQueue } from "../../src/jobs/queue.ts";
import { EMAIL_QUEUE } from "../../src/notifications/queues.ts";
import { createSubmissionEvents } from "../../src/notifications/submission-events.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { countOf, newForm, post, storedSubmissions } from "../intake/intake-fixtures.ts";

after(closeTestDatabase);

/** A queue that refuses every job until `working` is set, and records what it took. */
function switchableQueue() {
  const taken: { queue: string; data: object }[] = [];
  const queue: JobQueue & { working: boolean } = {
    working: false,
    async enqueue(_tx, name, data) {
      if (!queue.working) throw new Error("the queue refused");
      taken.push({ queue: name, data });
    },
    work: async () => {},
    stop: async () => {},
  };
  return { queue, taken };
}

async function appWith(queue: JobQueue) {
  const config = loadConfig({});
  const events = createSubmissionEvents(queue, { smtpConfigured: true, mailFrom: config.mailFrom });
  return buildTestApp({}, undefined, events);
}

const emailRecords = (db: Queryable, formId: string) =>
  db.query<{ submissionId: string; status: string }>(
    `SELECT submission_id AS "submissionId", status FROM email_records WHERE form_id = $1`,
    [formId],
  );

test("in a transaction (an Idempotency-Key), the jobs are enqueued in the submission's: when enqueuing fails, nothing is stored or counted", async () => {
  const { queue } = switchableQueue();
  const built = await appWith(queue);
  try {
    const { id } = await newForm(built.app, { emailsToNotify: ["team@acme.test"] });
    const res = await post(built.app, id, {
      body: "a=1",
      headers: { "idempotency-key": "one-try" },
    });
    assert.equal(res.status, 500);
    assert.deepEqual(await storedSubmissions(built.db, id), []);
    assert.equal(await countOf(built.db, id), 0);
    assert.deepEqual(await emailRecords(built.db, id), []);
  } finally {
    await built.close();
  }
});

test("in one statement, the event is stored with the submission: a queue that fails leaves it in the outbox, and it is relayed once the queue works", async () => {
  const { queue, taken } = switchableQueue();
  const built = await appWith(queue);
  try {
    const { id } = await newForm(built.app, { emailsToNotify: ["team@acme.test"] });
    const res = await post(built.app, id, { body: "a=1" });
    assert.equal(res.status, 201);
    assert.equal((await storedSubmissions(built.db, id)).length, 1);
    assert.equal(await countOf(built.db, id), 1);
    const waiting = await built.db.query<{ formId: string }>(
      `SELECT form_id AS "formId" FROM submission_events_outbox WHERE form_id = $1`,
      [id],
    );
    assert.deepEqual(waiting, [{ formId: id }]);
    assert.deepEqual(await emailRecords(built.db, id), []);
    queue.working = true;
    // The relay's next pass (at most a second away) takes it.
    const deadline = Date.now() + 10_000;
    while ((await emailRecords(built.db, id)).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(await emailRecords(built.db, id), [
      { submissionId: res.body.id, status: "pending" },
    ]);
    assert.deepEqual(
      await built.db.query("SELECT id FROM submission_events_outbox WHERE form_id = $1", [id]),
      [],
    );
    assert.deepEqual(
      taken.map((job) => job.queue),
      [EMAIL_QUEUE],
    );
  } finally {
    await built.close();
  }
});

test("the emails route relays the form's pending events before it reads: an email is there right after the 201", async () => {
  const { queue } = switchableQueue();
  queue.working = true;
  const built = await appWith(queue);
  try {
    const { id, key } = await newForm(built.app, { emailsToNotify: ["team@acme.test"] });
    const res = await post(built.app, id, { body: "a=1" });
    const emails = await built.app.inject({
      url: `/api/v1/forms/${id}/submissions/${res.body.id}/emails`,
      headers: { "api-key": key },
    });
    assert.equal(emails.statusCode, 200);
    assert.deepEqual(
      emails.json().data.map((email: { status: string }) => email.status),
      ["pending"],
    );
  } finally {
    await built.close();
  }
});
