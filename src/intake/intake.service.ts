import type { IncomingHttpHeaders } from "node:http";
import type { Queryable } from "../db/database.ts";
import { checkHostedAnswers, type HostedAnswers } from "../fields/hosted-answers.ts";
import { fileEntries, insertSubmissionFiles } from "../files/files.repository.ts";
import type { ReceivedFile } from "../files/uploads.ts";
import { autoCloseInstant } from "../forms/auto-close.ts";
import { settingsWithDefaults } from "../forms/form-defaults.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import { AppError, formNotFound } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { SubmissionEvents } from "../notifications/submission-events.ts";
import { submissionSearchText } from "../submissions/search-text.ts";
import { type LinkOf, toSubmissionRecord } from "../submissions/submissions.service.ts";
import { isBlacklisted, isCountryAllowed, isSourceAllowed } from "./access-rules.ts";
import { CAPTCHA_TOKEN_FIELDS, type CaptchaVerifier } from "./captcha.ts";
import type { CountryResolver } from "./country.ts";
import {
  findIntakeForm,
  type IntakeForm,
  lockForm,
  type NewSubmission,
} from "./intake.repository.ts";
import type { SubmittedFields } from "./intake-body.ts";
import { storeWhileFormOpen } from "./submission-store.repository.ts";

/** What the intake is given besides the database: the implementations of checks 1, 5 and 7. */
export interface IntakeClient {
  ip: string;
  /** The host the request was sent to: the service's own origin. */
  host: string;
  headers: IncomingHttpHeaders;
}

/** A captcha token longer than this is no token any provider issues: refused unsent. */
const MAX_CAPTCHA_TOKEN_LENGTH = 10_000;

/** Why a closed form is closed, in the words of a `form: <reason>` message (check 3). */
export function closedReason(form: IntakeForm, now: Date): string {
  const settings = settingsWithDefaults(form.settings);
  if (
    settings.limitResponses &&
    settings.maxResponses !== null &&
    form.submissions >= settings.maxResponses
  ) {
    return `has reached its limit of ${settings.maxResponses} responses`;
  }
  const deadline = form.autoCloseAt ?? autoCloseInstant(settings);
  if (deadline && deadline <= now) return `closed at ${deadline.toISOString()}`;
  return "is closed";
}

const formClosed = (form: IntakeForm, now: Date) =>
  new AppError("form_closed", `form: ${closedReason(form, now)}`);

/** Check 2: the form exists. */
export async function loadForm(db: Queryable, formId: string, now: Date): Promise<IntakeForm> {
  const form = FORM_ID.test(formId) ? await findIntakeForm(db, formId, now) : null;
  if (!form) throw formNotFound();
  return form;
}

/** Checks 3 to 5: the form is open, the address not blacklisted, the country allowed. */
export function admitForm(
  form: IntakeForm,
  client: IntakeClient,
  countries: CountryResolver,
  now: Date,
): string | null {
  if (form.isClosed) throw formClosed(form, now);
  if (isBlacklisted(client.ip, form.settings.ipBlacklist ?? "")) {
    throw new AppError("forbidden", "address: may not submit to this form");
  }
  const country = countries.countryOf(client.ip, client.headers);
  if (!isCountryAllowed(country, form.settings.allowedCountries ?? "")) {
    throw new AppError("forbidden", "country: submissions from it are not accepted by this form");
  }
  return country;
}

/**
 * The token fields check 7 reads: any provider's on an endpoint form (the field present names
 * it); on a hosted form only its `captchaProvider`'s, the widget its page shows.
 */
function captchaTokenNames(form: IntakeForm): string[] {
  const names = Object.keys(CAPTCHA_TOKEN_FIELDS);
  if (form.type !== "hosted") return names;
  const { captchaProvider } = settingsWithDefaults(form.settings);
  return names.filter((name) => CAPTCHA_TOKEN_FIELDS[name] === captchaProvider);
}

/** Check 7: with the provider check on, a token must be present and accepted. */
export async function checkCaptcha(
  form: IntakeForm,
  fields: SubmittedFields,
  ip: string,
  captcha: CaptchaVerifier,
): Promise<"passed" | "unverified"> {
  if (!form.settings.providerCaptchaEnabled) return "passed";
  const tokenNames = captchaTokenNames(form);
  const tokens = fields.filter(([name]) => tokenNames.includes(name));
  const present = tokens.some(([, value]) => typeof value === "string" && value !== "");
  if (!present) throw new AppError("captcha_failed", "captcha: a token is required");
  if (
    tokens.some(([, value]) => typeof value !== "string" || value.length > MAX_CAPTCHA_TOKEN_LENGTH)
  ) {
    throw new AppError("captcha_failed", "captcha: the token is not valid");
  }
  const outcome = await captcha.verify({
    // Without the token fields of other providers: on a hosted form, those are not read.
    fields: Object.fromEntries(
      fields.filter(
        ([name]) => !Object.hasOwn(CAPTCHA_TOKEN_FIELDS, name) || tokenNames.includes(name),
      ),
    ),
    secret: form.captchaSecret,
    remoteIp: ip,
  });
  if (outcome === "failed") {
    throw new AppError("captcha_failed", "captcha: the provider did not accept the token");
  }
  return outcome;
}

/**
 * The honeypot's names: as the owner wrote it, and as a browser's multipart body carries it (the
 * HTML standard writes `"`, CR and LF in part names as %22, %0D and %0A).
 */
function honeypotNames(form: IntakeForm): string[] {
  const name = form.settings.customHoneypot || "_gotcha";
  const inMultipart = name.replaceAll('"', "%22").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
  return inMultipart === name ? [name] : [name, inMultipart];
}

function isFilled(value: unknown): boolean {
  if (value === null || value === "") return false;
  if (Array.isArray(value)) return value.some(isFilled);
  return true;
}

/** The names accepted but never stored as answers: the honeypot and the captcha token fields. */
function isAnswerName(form: IntakeForm, name: string): boolean {
  return !honeypotNames(form).includes(name) && !Object.hasOwn(CAPTCHA_TOKEN_FIELDS, name);
}

/**
 * Check 8, and the answers to store. An endpoint form's: every field but the honeypot and the
 * captcha tokens, by name, with its files. A hosted form's: checked against its fields and logic
 * (src/fields/hosted-answers.ts); the page's `_token` is taken off before (receive-submission.ts).
 */
export function checkAnswers(
  form: IntakeForm,
  fields: SubmittedFields,
  files: ReceivedFile[],
): HostedAnswers<ReceivedFile> {
  if (form.type !== "hosted") {
    const answers = fields
      .filter(([name]) => isAnswerName(form, name))
      .map(([name, value]) => ({ id: name, label: name, value }));
    return { answers, files };
  }
  const ignored = new Set([...honeypotNames(form), ...Object.keys(CAPTCHA_TOKEN_FIELDS)]);
  return checkHostedAnswers(form.settings.fields ?? [], fields, files, ignored);
}

/** Check 9, and the captcha's outcome: why the submission is spam, or null. */
function spamReason(
  form: IntakeForm,
  fields: SubmittedFields,
  captcha: "passed" | "unverified",
  client: IntakeClient,
): NewSubmission["spamReason"] {
  if (captcha === "unverified") return "captcha_unverified";
  const honeypot = honeypotNames(form);
  if (fields.some(([name, value]) => honeypot.includes(name) && isFilled(value))) return "honeypot";
  if (!isSourceAllowed(client.headers, client.host, form.settings.allowedDomains ?? "")) {
    return "domain";
  }
  return null;
}

const headerText = (value: string | string[] | undefined, max: number) =>
  typeof value === "string" && value !== "" ? value.slice(0, max) : null;

/** The submission as it will be stored; its id is answered even when nothing is stored. */
export function buildSubmission(
  form: IntakeForm,
  fields: SubmittedFields,
  captcha: "passed" | "unverified",
  client: IntakeClient,
  country: string | null,
  now: Date,
  { answers, files }: HostedAnswers<ReceivedFile>,
): NewSubmission {
  const reason = spamReason(form, fields, captcha, client);
  return {
    id: newId("sub"),
    formId: form.id,
    organizationId: form.organizationId,
    isSpam: reason !== null,
    spamReason: reason,
    answers,
    files,
    searchText: submissionSearchText(answers),
    meta: {
      ip: client.ip || null,
      country,
      userAgent: headerText(client.headers["user-agent"], 1_000),
      referrer: headerText(client.headers.referer, 2_000),
    },
    createdAt: now,
  };
}

/**
 * Stores and counts the submission in `tx`, a transaction. A form with a limit to enforce is
 * locked first, and the statement that stores reads its count after the lock: concurrent intakes
 * on any number of instances take turns and never accept more than `maxResponses`; other forms
 * take no lock. Its notifications are enqueued in the same transaction: once it commits they go
 * out, even if this process dies the next instant.
 */
export async function storeSubmission(
  tx: Queryable,
  submission: NewSubmission,
  form: IntakeForm,
  events: SubmissionEvents,
  linkOf: LinkOf,
) {
  const { limitResponses, maxResponses } = settingsWithDefaults(form.settings);
  if (!submission.isSpam && limitResponses && maxResponses !== null) {
    if (!(await lockForm(tx, form.id))) throw formNotFound();
  }
  const rules = {
    store: form.settings.submissionStorageDuration !== "never",
    count: !submission.isSpam,
  };
  if (!(await storeWhileFormOpen(tx, submission, rules))) {
    // Closed (or gone) since it was admitted: refused with the reason it has now.
    const now = new Date();
    const current = await findIntakeForm(tx, form.id, now);
    if (!current) throw formNotFound();
    throw formClosed(current, now);
  }
  if (rules.store) await insertSubmissionFiles(tx, submission.id, submission.files);
  // Built from what was received, so that `never` (nothing stored) notifies all the same.
  const record = toSubmissionRecord(
    { ...submission, files: fileEntries(submission.files), updatedAt: submission.createdAt },
    linkOf,
  );
  await events.enqueueSubmissionEvents(tx, [
    { form, submission: record, isSpam: submission.isSpam },
  ]);
}
