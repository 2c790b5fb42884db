import type { Queryable } from "../db/database.ts";
import { settingsWithDefaults } from "../forms/form-defaults.ts";
import { outboxJson } from "../notifications/event-outbox.repository.ts";
import { mayNotify, type SubmissionEvent } from "../notifications/submission-events.ts";
import { type LinkOf, toSubmissionRecord } from "../submissions/submissions.service.ts";
import type { IntakeForm, NewSubmission } from "./intake.repository.ts";
import { storeWhileFormUnchanged } from "./submission-store.repository.ts";

/**
 * Whether a submission to `form` needs nothing in its transaction but its own row, its count and
 * its notifications' event: an open form without a limit of responses to enforce (which takes
 * the form's lock) or a captcha (whose token cannot be verified twice). Such a submission, sent
 * without files or an idempotency key, is stored by one statement.
 */
export function needsOnlyItsRow(form: IntakeForm, now: Date): boolean {
  const settings = settingsWithDefaults(form.settings);
  return (
    !form.storedIsClosed &&
    (form.autoCloseAt === null || form.autoCloseAt > now) &&
    !(settings.limitResponses && settings.maxResponses !== null) &&
    !settings.providerCaptchaEnabled
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

/**
 * Stores and counts the submission in one statement, its notifications' event with it, or throws
 * FormChanged. Resolves to whether it left an event in the outbox. The event carries what notifications read of the form as it was checked, and the
 * record as the API would answer it (built from what was received: `never` stores nothing).
 */
export async function storeInOneStatement(
  db: Queryable,
  submission: NewSubmission,
  form: IntakeForm,
  linkOf: LinkOf,
  relay: string,
): Promise<boolean> {
  const event: SubmissionEvent | null = mayNotify(form)
    ? {
        form: { id: form.id, name: form.name, plan: form.plan, settings: form.settings },
        submission: toSubmissionRecord(
          { ...submission, files: [], updatedAt: submission.createdAt },
          linkOf,
        ),
        isSpam: submission.isSpam,
      }
    : null;
  const stored = await storeWhileFormUnchanged(
    db,
    submission,
    form,
    { store: form.settings.submissionStorageDuration !== "never", count: !submission.isSpam },
    event && { json: outboxJson(event), relay },
  );
  if (!stored) throw new FormChanged();
  return event !== null;
}
