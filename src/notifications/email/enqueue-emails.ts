import type { Queryable } from "../../db/database.ts";
import { type FormSettings, settingsWithDefaults } from "../../forms/form-defaults.ts";
import { newId } from "../../ids.ts";
import type { JobQueue } from "../../jobs/queue.ts";
import { EMAIL_QUEUE } from "../queues.ts";
import type { SubmissionEvent } from "../submission-events.ts";
import { autoresponseBodies } from "./autoresponse.ts";
import {
  countAutoresponses,
  type EmailKind,
  type EmailMessage,
  insertEmailRecords,
  lockAutoresponses,
  type NewEmailRecord,
} from "./email-records.repository.ts";
import { ownerBodies, ownerSubject } from "./owner-message.ts";
import { respondentAddress } from "./respondent-address.ts";

export interface EmailSettings {
  /** Without an SMTP server, emails are recorded `skipped` and never enqueued. */
  smtpConfigured: boolean;
  /** MAIL_FROM: `Name <address>` or an address. */
  mailFrom: string;
}

/** An email job: the record to send, and how many attempts it had when the job was enqueued. */
export interface EmailJob {
  emailId: string;
  attempt: number;
}

/** Autoresponses to one address from one form within an hour (notifications.md §2). */
export const AUTORESPONSES_PER_HOUR = 5;

export function parseMailFrom(mailFrom: string): { name: string; address: string } {
  const match = /^(.*)<([^<>]+)>$/.exec(mailFrom);
  if (!match) return { name: "", address: mailFrom };
  return { name: (match[1] ?? "").trim().replace(/^"(.*)"$/, "$1"), address: match[2] as string };
}

interface Email {
  kind: EmailKind;
  subject: string;
  message: EmailMessage | null;
  to: string;
  /** Skipped for its own reason (the cap), whatever the SMTP configuration. */
  refusal?: string;
}

/** The email records a batch of events causes, and a job for each record to be sent. */
interface EmailWrites {
  records: NewEmailRecord[];
  jobs: EmailJob[];
}

/** Adds `email` of `event` to the batch's records and, when it is to be sent, jobs. */
function addEmail(
  writes: EmailWrites,
  settings: EmailSettings,
  event: SubmissionEvent,
  email: Email,
) {
  const sendable = settings.smtpConfigured && email.refusal === undefined;
  const id = newId("eml");
  writes.records.push({
    id,
    formId: event.form.id,
    submissionId: event.submission.id,
    submissionStored: event.form.settings.submissionStorageDuration !== "never",
    kind: email.kind,
    to: email.to,
    subject: email.subject,
    status: sendable ? "pending" : "skipped",
    lastError: email.refusal ?? null,
    message: sendable ? email.message : null,
    createdAt: new Date(event.submission.createdAt),
  });
  if (sendable) writes.jobs.push({ emailId: id, attempt: 0 });
}

type EmailRules = Pick<FormSettings, "sendEmailNotifications" | "emailsToNotify">;
type AutoresponseRules = Pick<FormSettings, "sendRespondentEmailNotifications">;

const notifiesOwner = (settings: EmailRules) =>
  settings.sendEmailNotifications && settings.emailsToNotify.length > 0;

const mayAutorespond = (plan: "free" | "paid", settings: AutoresponseRules) =>
  plan === "paid" && settings.sendRespondentEmailNotifications;

/** Whether a submission to the form may cause an email (the autoresponse needs an address too). */
export function mayEmail(form: Pick<SubmissionEvent["form"], "plan" | "settings">): boolean {
  const settings = settingsWithDefaults(form.settings);
  return notifiesOwner(settings) || mayAutorespond(form.plan, settings);
}

/**
 * Records the owner notification and the autoresponse that each accepted, non-spam submission of
 * `events` causes, in `tx`, and enqueues those to be sent: a statement for the records and one
 * for the jobs, whatever the number of events (and, per autoresponse, its cap's lock and count).
 */
export async function enqueueEmails(
  tx: Queryable,
  queue: JobQueue,
  settings: EmailSettings,
  events: readonly SubmissionEvent[],
) {
  const writes: EmailWrites = { records: [], jobs: [] };
  /** Autoresponses of this batch, not yet written, by form and address: the cap counts them. */
  const autoresponded = new Map<string, number>();
  const from = parseMailFrom(settings.mailFrom);
  for (const event of events) {
    const { form, submission } = event;
    const formSettings = settingsWithDefaults(form.settings);
    const respondent = respondentAddress(submission.answers, formSettings.fields);
    if (notifiesOwner(formSettings)) {
      const subject = ownerSubject(form.name);
      const bodies = ownerBodies({
        formName: form.name,
        submission,
        censor: !formSettings.disableEmailDataCensoring,
      });
      const to = [...formSettings.emailsToNotify];
      addEmail(writes, settings, event, {
        kind: "owner",
        to: to.join(", "),
        subject,
        message: { from, to, replyTo: respondent, subject, ...bodies },
      });
    }
    if (mayAutorespond(form.plan, formSettings) && respondent) {
      // An empty subject would read as spam to most mail filters: the form's name stands in.
      const subject = formSettings.respondentEmailSubject || form.name;
      await lockAutoresponses(tx, form.id, respondent);
      const hourAgo = new Date(new Date(submission.createdAt).getTime() - 3_600_000);
      const key = `${form.id} ${respondent.toLowerCase()}`;
      const earlier = autoresponded.get(key) ?? 0;
      const sent = (await countAutoresponses(tx, form.id, respondent, hourAgo)) + earlier;
      const refused = sent >= AUTORESPONSES_PER_HOUR;
      if (!refused) autoresponded.set(key, earlier + 1);
      const bodies = await autoresponseBodies(
        formSettings.respondentEmailMessageHTML,
        submission.answers,
      );
      addEmail(writes, settings, event, {
        kind: "respondent",
        to: respondent,
        subject,
        message: {
          from: { name: formSettings.respondentEmailFromName || from.name, address: from.address },
          to: [respondent],
          replyTo: null,
          subject,
          ...bodies,
        },
        ...(refused ? { refusal: "rate limited" } : {}),
      });
    }
  }
  await insertEmailRecords(tx, writes.records);
  if (writes.jobs.length > 0) await queue.enqueueAll(tx, EMAIL_QUEUE, writes.jobs);
}
