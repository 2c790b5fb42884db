import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { startNotifications } from "../../src/notifications/notifications.ts";
import { buildTestApp, closeTestDatabase, testDatabase } from "../helpers.ts";
import {
  emailForm,
  emailHarness,
  emailsOf,
  type Harness,
  recordingLog,
  settledEmails,
  submit,
} from "./email-fixtures.ts";

let harness: Harness;

before(async () => {
  harness = await emailHarness();
});

after(async () => {
  await harness.close();
  await closeTestDatabase();
});

const only = (emails: Record<string, unknown>[]) => {
  assert.equal(emails.length, 1);
  const [email] = emails as [Record<string, unknown>];
  return { status: email.status, attempts: email.attempts, lastError: email.lastError };
};

test("an SMTP 4xx is retried on the schedule, and the next attempt sends it", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  harness.sink.failNext.push(451);
  const id = await submit(harness, form.id, { a: "1" });
  const failedOnce = await settledEmails(
    harness,
    form.key,
    form.id,
    id,
    (e) => e[0]?.attempts === 1,
  );
  assert.deepEqual(only(failedOnce), {
    status: "pending",
    attempts: 1,
    lastError: "451 try again later",
  });
  const emails = await settledEmails(harness, form.key, form.id, id);
  assert.deepEqual(only(emails), { status: "sent", attempts: 2, lastError: null });
  assert.equal(harness.sink.withSubject(`New submission: ${form.name}`).length, 1);
});

test("an SMTP 5xx fails at once, without a retry", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  harness.sink.failNext.push(554);
  const id = await submit(harness, form.id, { a: "1" });
  const emails = await settledEmails(harness, form.key, form.id, id);
  assert.deepEqual(only(emails), {
    status: "failed",
    attempts: 1,
    lastError: "554 try again later",
  });
  // The schedule's next step is 1 s: long past, no second attempt came.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.deepEqual(only((await emailsOf(harness, form.key, form.id, id)).json().data), {
    status: "failed",
    attempts: 1,
    lastError: "554 try again later",
  });
  assert.deepEqual(harness.sink.withSubject(`New submission: ${form.name}`), []);
});

test("sent when one recipient accepts it; the refused ones are named in lastError", async () => {
  const form = await emailForm(harness, {
    emailsToNotify: ["team@acme.test", "gone@acme.test"],
  });
  harness.sink.refuse.set("gone@acme.test", 550);
  const id = await submit(harness, form.id, { a: "1" });
  const emails = await settledEmails(harness, form.key, form.id, id);
  assert.deepEqual(only(emails), {
    status: "sent",
    attempts: 1,
    lastError: "refused: gone@acme.test (550 mailbox gone@acme.test unavailable)",
  });
  const [mail] = harness.sink.withSubject(`New submission: ${form.name}`);
  assert.deepEqual(mail?.recipients, ["team@acme.test"]);
});

test("every recipient refused with a 5xx: failed", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["nobody@acme.test"] });
  harness.sink.refuse.set("nobody@acme.test", 550);
  const id = await submit(harness, form.id, { a: "1" });
  const emails = await settledEmails(harness, form.key, form.id, id);
  assert.deepEqual(only(emails), {
    status: "failed",
    attempts: 1,
    lastError: "550 mailbox nobody@acme.test unavailable",
  });
});

test("the SMTP server down, then up: retried until it is sent", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  await harness.sink.down();
  try {
    const id = await submit(harness, form.id, { a: "1" });
    const refused = await settledEmails(
      harness,
      form.key,
      form.id,
      id,
      (e) => Number(e[0]?.attempts) >= 1,
    );
    assert.equal(refused[0]?.status, "pending");
    assert.match(String(refused[0]?.lastError), /ECONNREFUSED/);
    await harness.sink.up();
    const emails = await settledEmails(harness, form.key, form.id, id);
    assert.equal(emails[0]?.status, "sent");
    assert.equal(harness.sink.withSubject(`New submission: ${form.name}`).length, 1);
  } finally {
    await harness.sink.up().catch(() => {});
  }
});

test("temporary failures past the schedule's end: failed after its last attempt", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  // 8 attempts in all with the 7 waits of the schedule.
  harness.sink.failNext.push(421, 421, 421, 421, 421, 421, 421, 421);
  const id = await submit(harness, form.id, { a: "1" });
  const emails = await settledEmails(harness, form.key, form.id, id, undefined, 40_000);
  assert.deepEqual(only(emails), {
    status: "failed",
    attempts: 8,
    lastError: "421 try again later",
  });
  assert.deepEqual(harness.sink.failNext, []);
});

test("without SMTP_URL: one warning at start; each email recorded skipped, with no attempts", async () => {
  const log = recordingLog();
  const config = { ...loadConfig({}), databaseUrl: process.env.DATABASE_URL ?? null };
  const notifications = await startNotifications({ db: await testDatabase(), config, log });
  const built = await buildTestApp(config, { events: notifications.events });
  try {
    assert.deepEqual(log.lines, [
      { level: "warn", message: "SMTP_URL is not set: emails are recorded as skipped" },
    ]);
    const skippedHarness = { ...harness, built };
    const form = await emailForm(skippedHarness, { emailsToNotify: ["team@acme.test"] });
    const id = await submit(skippedHarness, form.id, { a: "1" });
    const emails = (await emailsOf(skippedHarness, form.key, form.id, id)).json().data;
    assert.deepEqual(only(emails), { status: "skipped", attempts: 0, lastError: null });
    assert.equal(emails[0].subject, `New submission: ${form.name}`);
    assert.equal(log.lines.length, 1);
  } finally {
    await built.close();
    await notifications.stop(1_000);
  }
});
