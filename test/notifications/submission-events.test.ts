import assert from "node:assert/strict";
import { after, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import type { JobQueue } from "../../src/jobs/queue.ts";
import { createSubmissionEvents } from "../../src/notifications/submission-events.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { countOf, newForm, post, storedSubmissions } from "../intake/intake-fixtures.ts";

after(closeTestDatabase);

test("the jobs are enqueued in the submission's transaction: when enqueuing fails, nothing is stored or counted", async () => {
  const failing: JobQueue = {
    enqueue: () => Promise.reject(new Error("the queue refused")),
    work: async () => {},
    stop: async () => {},
  };
  const config = loadConfig({});
  const events = createSubmissionEvents(failing, {
    smtpConfigured: true,
    mailFrom: config.mailFrom,
  });
  const built = await buildTestApp({}, undefined, events);
  try {
    const { id } = await newForm(built.app, { emailsToNotify: ["team@acme.test"] });
    const res = await post(built.app, id, { body: "a=1" });
    assert.equal(res.status, 500);
    assert.deepEqual(await storedSubmissions(built.db, id), []);
    assert.equal(await countOf(built.db, id), 0);
    assert.deepEqual(
      await built.db.query("SELECT id FROM email_records WHERE form_id = $1", [id]),
      [],
    );
  } finally {
    await built.close();
  }
});
