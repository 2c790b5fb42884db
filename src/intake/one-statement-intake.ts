import type { Queryable } from "../db/database.ts";
import { DEFAULT_SETTINGS } from "../forms/form-defaults.ts";
import { mayNotify } from "../notifications/submission-events.ts";
import type { IntakeForm, NewSubmission } from "./intake.repository.ts";
import { storeWhileFormUnchanged } from "./submission-store.repository.ts";

/**
 * Whether a submission to `form` needs nothing in its transaction but its own row and its count:
 * an open form without a limit of responses to enforce (which takes the form's lock), a captcha
 * (whose token cannot be verified twice) or notifications to enqueue. Such a submission, sent
 * without files or an idempotency key, is stored by one statement.
 */
export function needsOnlyItsRow(form: IntakeForm, now: Date): boolean {
  const settings = { ...DEFAULT_SETTINGS, ...form.settings };
  return (
    !form.storedIsClosed &&
    (form.autoCloseAt === null || form.autoCloseAt > now) &&
    !(settings.limitResponses && settings.maxResponses !== null) &&
    !settings.providerCaptchaEnabled &&
    !mayNotify(form)
  );
}

/**
 * The form was changed (or deleted) after it was read, and nothing was stored: its checks are to
 * be made again on the form as it is now.
 */
export class FormChanged extends Error {
  constructor() {
    super("the form changed while its submission was checked");
  }
}

/** Stores and counts the submission in one statement, or throws FormChanged. */
export async function storeInOneStatement(
  db: Queryable,
  submission: NewSubmission,
  form: IntakeForm,
): Promise<void> {
  const stored = await storeWhileFormUnchanged(db, submission, form, {
    store: form.settings.submissionStorageDuration !== "never",
    count: !submission.isSpam,
  });
  if (!stored) throw new FormChanged();
}
