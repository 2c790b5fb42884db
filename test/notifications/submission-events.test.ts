import assert from "node:assert/strict";
import { after, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import type { Queryable } from "../../src/db/database.ts";
import type { JobQueue } from "../../src/jobs/queue.ts";
import { EMAIL_QUEUE, WEBHOOK_QUEUE } from "../../src/notifications/queues.ts";
import { createSubmissionEvents } from "../../src/notifications/submission-events.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { countOf, newForm, post, storedSubmissions } from "../intake/intake-fixtures.ts";
import { apiOf } from "../webhooks/webhook-fixtures.ts";

after(closeTestDatabase);

/**
 * A queue that refuses every job until `working` is set, and records what it took and, per
 * statement, how many jobs it enqueued.
 */
function switchableQueue() {
  const taken: { queue: string; data: object }[] = [];
  const statements: { queue: string; jobs: number }[] = [];
  const queue: JobQueue & { working: boolean; refusals: number } = {
    working: false,
    refusals: 0,
    async enqueue(_tx, name, data) {
      if (!queue.working) throw new Error("the queue refused");
      taken.push({ queue: name, data });
      statements.push({ queue: name, jobs: 1 });
    },
    async enqueueAll(_tx, name, batch) {
      if (!queue.working) {
        queue.refusals++;
        throw new Error("the queue refused");
      }
      for (const data of batch) taken.push({ queue: name, data });
      statements.push({ queue: name, jobs: batch.length });
    },
    work: async () => {},
    workInBatches: async () => {},
    stop: async () => {},
  };
  return { queue, taken, statements };
}

async function appWith(queue: JobQueue) {
  const config = loadConfig({});
  const events = createSubmissionEvents(queue, { smtpConfigured: true, mailFrom: config.mailFrom });
  return buildTestApp({}, { events });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Lets the queue work once the relay has been refused twice more: the second pass began after
 * every event was stored, so the next takes them all in one batch (a pass begun during the last
 * post could take all but its event).
 */
async function workFromNextPass(queue: ReturnType<typeof switchableQueue>["queue"]) {
  const seen = queue.refusals;
  const deadline = Date.now() + 10_000;
  while (queue.refusals < seen + 2 && Date.now() < deadline) await sleep(50);
  queue.working = true;
}

/** Waits (at most 10 s) until the relay has taken every event out of the outbox. */
async function relayed(db: Queryable) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM submission_events_outbox",
    );
    if (row?.n === 0) return;
    await sleep(50);
  }
  assert.fail("the relay left events in the outbox");
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

test("a batch of events from the outbox: the autoresponder's cap counts the batch's own autoresponses", async () => {
  const { queue } = switchableQueue();
  const built = await appWith(queue);
  try {
    const { id } = await newForm(
      built.app,
      { sendRespondentEmailNotifications: true, respondentEmailMessageHTML: "<p>Thanks</p>" },
      "paid",
    );
    // Refused, the events wait in the outbox: the relay takes all 7 in one pass.
    for (let n = 0; n < 7; n++) {
      assert.equal((await post(built.app, id, { body: "email=cap%40example.com" })).status, 201);
    }
    await workFromNextPass(queue);
    await relayed(built.db);
    const records = await built.db.query<{ status: string; lastError: string | null }>(
      `SELECT status, last_error AS "lastError" FROM email_records WHERE form_id = $1
        ORDER BY status`,
      [id],
    );
    assert.deepEqual(records, [
      ...Array.from({ length: 5 }, () => ({ status: "pending", lastError: null })),
      { status: "skipped", lastError: "rate limited" },
      { status: "skipped", lastError: "rate limited" },
    ]);
  } finally {
    await built.close();
  }
});

test("a batch of events from the outbox: each gets its own form's emails and deliveries, the jobs enqueued in one statement per queue", async () => {
  const { queue, statements } = switchableQueue();
  const built = await appWith(queue);
  try {
    const forms = [];
    for (const name of ["first", "second"]) {
      const form = await newForm(built.app, { name, emailsToNotify: [`${name}@acme.test`] });
      const webhook = await apiOf(built.app, form.key).newWebhook(form.id, {
        url: `https://${name}.example.com/hook`,
      });
      forms.push({ ...form, webhookId: webhook.id });
    }
    for (const form of [...forms, ...forms]) {
      assert.equal((await post(built.app, form.id, { body: "a=1" })).status, 201);
    }
    await workFromNextPass(queue);
    await relayed(built.db);
    for (const form of forms) {
      const emails = await built.db.query<{ to: string }>(
        `SELECT recipients AS "to" FROM email_records WHERE form_id = $1`,
        [form.id],
      );
      assert.equal(emails.length, 2);
      const deliveries = await built.db.query<{ webhookId: string; body: string }>(
        `SELECT webhook_id AS "webhookId", body FROM webhook_deliveries
          WHERE webhook_id IN (SELECT id FROM webhooks WHERE form_id = $1)`,
        [form.id],
      );
      assert.equal(deliveries.length, 2);
      for (const delivery of deliveries) {
        assert.equal(delivery.webhookId, form.webhookId);
        assert.equal(JSON.parse(delivery.body).data.form.id, form.id);
      }
    }
    assert.deepEqual(statements, [
      { queue: EMAIL_QUEUE, jobs: 4 },
      { queue: WEBHOOK_QUEUE, jobs: 4 },
    ]);
  } finally {
    await built.close();
  }
});
