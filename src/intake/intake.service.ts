import type { IncomingHttpHeaders } from "node:http";
import type { Queryable } from "../db/database.ts";
import { autoCloseInstant } from "../forms/auto-close.ts";
import { DEFAULT_SETTINGS } from "../forms/form-defaults.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import { AppError, formNotFound } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { Answer } from "../submissions/answer.ts";
import { submissionSearchText } from "../submissions/search-text.ts";
import { changeSubmissionCount } from "../submissions/submission-counts.repository.ts";
import { isBlacklisted, isCountryAllowed, isSourceAllowed } from "./access-rules.ts";
import { CAPTCHA_TOKEN_FIELDS, type CaptchaVerifier } from "./captcha.ts";
import type { CountryResolver } from "./country.ts";
import {
  findIntakeForm,
  type IntakeForm,
  insertSubmission,
  lockForm,
  type NewSubmission,
} from "./intake.repository.ts";
import type { SubmittedFields } from "./intake-body.ts";

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
  const settings = { ...DEFAULT_SETTINGS, ...form.settings };
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

/** Check 7: with the provider check on, a token must be present and accepted. */
export async function checkCaptcha(
  form: IntakeForm,
  fields: SubmittedFields,
  ip: string,
  captcha: CaptchaVerifier,
): Promise<"passed" | "unverified"> {
  if (!form.settings.providerCaptchaEnabled) return "passed";
  const tokens = fields.filter(([name]) => Object.hasOwn(CAPTCHA_TOKEN_FIELDS, name));
  const present = tokens.some(([, value]) => typeof value === "string" && value !== "");
  if (!present) throw new AppError("captcha_failed", "captcha: a token is required");
  if (
    tokens.some(([, value]) => typeof value !== "string" || value.length > MAX_CAPTCHA_TOKEN_LENGTH)
  ) {
    throw new AppError("captcha_failed", "captcha: the token is not valid");
  }
  const outcome = await captcha.verify({
    fields: Object.fromEntries(fields),
    secret: form.captchaSecret,
    remoteIp: ip,
  });
  if (outcome === "failed") {
    throw new AppError("captcha_failed", "captcha: the provider did not accept the token");
  }
  return outcome;
}

const honeypotName = (form: IntakeForm) => form.settings.customHoneypot || "_gotcha";

function isFilled(value: unknown): boolean {
  if (value === null || value === "") return false;
  if (Array.isArray(value)) return value.some(isFilled);
  return true;
}

/**
 * The answers of an endpoint form: every field but the honeypot and the captcha tokens, by name.
 * Check 8 (a hosted form's answers against its fields) will replace this for hosted forms; until
 * then their answers are taken as an endpoint form's.
 */
function answersOf(form: IntakeForm, fields: SubmittedFields): Answer[] {
  const honeypot = honeypotName(form);
  return fields
    .filter(([name]) => name !== honeypot && !Object.hasOwn(CAPTCHA_TOKEN_FIELDS, name))
    .map(([name, value]) => ({ id: name, label: name, value }));
}

/** Check 9, and the captcha's outcome: why the submission is spam, or null. */
function spamReason(
  form: IntakeForm,
  fields: SubmittedFields,
  captcha: "passed" | "unverified",
  client: IntakeClient,
): NewSubmission["spamReason"] {
  if (captcha === "unverified") return "captcha_unverified";
  const honeypot = honeypotName(form);
  if (fields.some(([name, value]) => name === honeypot && isFilled(value))) return "honeypot";
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
): NewSubmission {
  const answers = answersOf(form, fields);
  const reason = spamReason(form, fields, captcha, client);
  return {
    id: newId("sub"),
    formId: form.id,
    organizationId: form.organizationId,
    isSpam: reason !== null,
    spamReason: reason,
    answers,
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
 * locked first and its count read again under the lock, so that concurrent intakes on any number
 * of instances take turns and never accept more than `maxResponses`; other forms take no lock.
 */
export async function storeSubmission(tx: Queryable, submission: NewSubmission, form: IntakeForm) {
  const { limitResponses, maxResponses } = { ...DEFAULT_SETTINGS, ...form.settings };
  if (!submission.isSpam && limitResponses && maxResponses !== null) {
    if (!(await lockForm(tx, form.id))) throw formNotFound();
    const now = new Date();
    const locked = await findIntakeForm(tx, form.id, now);
    if (!locked) throw formNotFound();
    if (locked.isClosed) throw formClosed(locked, now);
  }
  if (form.settings.submissionStorageDuration !== "never") {
    await insertSubmission(tx, submission);
  }
  if (!submission.isSpam) await changeSubmissionCount(tx, form.id, 1);
}
