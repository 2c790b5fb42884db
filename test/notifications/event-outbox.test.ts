import assert from "node:assert/strict";
import { after, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { DEFAULT_SETTINGS } from "../../src/forms/form-defaults.ts";
import { outboxJson, takeEventsOfForm } from "../../src/notifications/event-outbox.repository.ts";
import {
  createSubmissionEvents,
  type SubmissionEvent,
} from "../../src/notifications/submission-events.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm, post } from "../intake/intake-fixtures.ts";
import { noQueue } from "../intake/test-implementations.ts";

after(closeTestDatabase);

test("an event waits in the outbox with only the form's settings that are not defaults, and is taken with them whole", async () => {
  const config = loadConfig({});
  // A queue that refuses every job: the relay's passes roll back and the event stays.
  const events = createSubmissionEvents(noQueue, {
    smtpConfigured: true,
    mailFrom: config.mailFrom,
  });
  const built = await buildTestApp({}, { events });
  try {
    const { id } = await newForm(built.app, {
      emailsToNotify: ["team@acme.test"],
      disableEmailDataCensoring: true,
    });
    const posted = await post(built.app, id, { body: "name=Ada" });
    assert.equal(posted.status, 201);
    const [stored] = await built.db.query<{ settings: object; size: number }>(
      `SELECT event->'form'->'settings' AS settings, octet_length(event::text) AS size
         FROM submission_events_outbox WHERE form_id = $1`,
      [id],
    );
    assert.deepEqual(stored?.settings, {
      emailsToNotify: ["team@acme.test"],
      disableEmailDataCensoring: true,
    });
    assert.ok((stored?.size ?? 0) < 1_000, `an event of ${stored?.size} bytes`);

    const [form] = await built.db.query<{ settings: object }>(
      "SELECT settings FROM forms WHERE id = $1",
      [id],
    );
    const taken = await built.db.transaction((tx) => takeEventsOfForm(tx, id, 10));
    assert.equal(taken.length, 1);
    assert.deepEqual(taken[0]?.form.settings, { ...DEFAULT_SETTINGS, ...form?.settings });
    assert.equal(taken[0]?.submission.id, posted.body.id);
  } finally {
    await built.close();
  }
});

test("an event's outbox JSON is that event's, whatever was written before for the same settings", () => {
  const settings = { emailsToNotify: ["team@acme.test"], webhookEnabled: true };
  const submission = {
    id: "sub_AAAAAAAAAAAAAAAAAAAAAA",
    formId: "form_AAAAAAAAAAAAAAAAAAAAAA",
    isSpam: true,
    spamReason: "honeypot" as const,
    answers: [{ id: "a", label: "A", value: "1" }],
    files: [],
    meta: { ip: null, country: null, userAgent: null, referrer: null },
    createdAt: "2026-11-28T12:00:00.000Z",
    updatedAt: "2026-11-28T12:00:00.000Z",
  };
  const eventOf = (name: string, plan: "free" | "paid") => ({
    form: { id: submission.formId, name, plan, settings } as SubmissionEvent["form"],
    submission,
    isSpam: true,
  });
  for (const [name, plan] of [
    ["Contact", "free"],
    ["Contact", "free"],
    ["Renamed", "free"],
    ["Renamed", "paid"],
  ] as const) {
    assert.deepEqual(JSON.parse(outboxJson(eventOf(name, plan))), eventOf(name, plan));
  }
});
