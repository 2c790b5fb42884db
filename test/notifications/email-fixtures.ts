import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { type Config, loadConfig } from "../../src/config.ts";
import { type Notifications, startNotifications } from "../../src/notifications/notifications.ts";
import type { Body } from "../forms/form-fixtures.ts";
import { buildTestApp, testDatabase } from "../helpers.ts";
import { JSON_TYPE, newForm, post } from "../intake/intake-fixtures.ts";
import { SmtpSink } from "./smtp-sink.ts";

export const MAIL_FROM = "Acme Forms <forms@acme.test>";

/** A log that keeps what it is told, for tests to read. */
export function recordingLog() {
  const lines: { level: string; message: string }[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      lines.push({ level, message: String(args.find((a) => typeof a === "string")) });
  return { lines, warn: at("warn"), error: at("error") };
}

/**
 * An app whose notifications run on the test store with a worker that sends through an SMTP
 * sink of its own. Retries wait 1 s instead of the schedule's minutes (configuration, as an
 * operator would set it: the engine's clock is never faked).
 */
export async function emailHarness(overrides: Partial<Config> = {}) {
  const sink = new SmtpSink();
  await sink.up();
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: process.env.DATABASE_URL ?? null,
    smtpUrl: `smtp://formdeck:s3cret@127.0.0.1:${sink.port}`,
    mailFrom: MAIL_FROM,
    deliveryRetryDelaysSeconds: [1, 1, 1, 1, 1, 1, 1],
    intakeRateLimitMax: 1_000,
    ...overrides,
  };
  const log = recordingLog();
  const notifications: Notifications = await startNotifications({
    db: await testDatabase(),
    config,
    log,
  });
  const built = await buildTestApp(config, { events: notifications.events });
  return {
    sink,
    built,
    log,
    notifications,
    async close() {
      await built.close();
      await notifications.stop(1_000);
      await sink.down();
    },
  };
}

export type Harness = Awaited<ReturnType<typeof emailHarness>>;

/** A form with a name no other test uses, so that its emails are told apart by subject. */
export async function emailForm(
  harness: Harness,
  settings: Body = {},
  plan: "free" | "paid" = "free",
) {
  const name = `Contact ${randomUUID().slice(0, 8)}`;
  return { name, ...(await newForm(harness.built.app, { name, ...settings }, plan)) };
}

export async function submit(harness: Harness, formId: string, answers: Body): Promise<string> {
  const res = await post(harness.built.app, formId, {
    body: JSON.stringify(answers),
    contentType: JSON_TYPE,
  });
  assert.equal(res.status, 201, res.text);
  return res.body.id as string;
}

export async function emailsOf(
  harness: Harness,
  key: string,
  formId: string,
  submissionId: string,
) {
  return harness.built.app.inject({
    method: "GET",
    url: `/api/v1/forms/${formId}/submissions/${submissionId}/emails`,
    headers: { "api-key": key },
  });
}

/** The submission's emails once none is pending any more (or `until` holds), within `ms`. */
export async function settledEmails(
  harness: Harness,
  key: string,
  formId: string,
  submissionId: string,
  until: (emails: Body[]) => boolean = (emails) => emails.every((e) => e.status !== "pending"),
  ms = 20_000,
): Promise<Body[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await emailsOf(harness, key, formId, submissionId);
    assert.equal(res.statusCode, 200, res.body);
    const emails = res.json().data as Body[];
    if (until(emails)) return emails;
    if (Date.now() > deadline) assert.fail(`emails still unsettled: ${JSON.stringify(emails)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export const EMAIL_ID = /^eml_[A-Za-z0-9_-]{22}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
