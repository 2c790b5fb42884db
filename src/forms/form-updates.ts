import type { KeyOwner } from "../auth/api-keys.repository.ts";
import type { Database } from "../db/database.ts";
import { formNotFound, invalid } from "../http/errors.ts";
import { autoCloseInstant } from "./auto-close.ts";
import { nextClosingState } from "./closing.ts";
import type { Announcement } from "./form-changes.repository.ts";
import { announceFormChange, formChange } from "./form-changes.ts";
import { DEFAULT_SETTINGS, type FormSettings } from "./form-defaults.ts";
import {
  type FormAccess,
  formStatements,
  formsInBatches,
  formsInTransaction,
} from "./form-writes.repository.ts";
import { lockForm } from "./forms.repository.ts";
import type { FormRecord, UpdateFormInput } from "./forms.schemas.ts";
import { FORM_ID, settingsOf, toFormRecord } from "./forms.service.ts";
import { PAID_FEATURES, PAID_MEMBERS, requirePlanFor } from "./plans.ts";

const AUTO_CLOSE_MEMBERS = ["autoCloseEnabled", ...PAID_FEATURES.autoCloseEnabled];

/**
 * Reopening a form whose limit of responses still holds would not open it: refused, unless the
 * same update raises the limit or turns it off (`settings` are the ones after the update).
 */
function requireBelowLimit(settings: FormSettings, submissions: number) {
  const { limitResponses, maxResponses } = settings;
  if (limitResponses && maxResponses !== null && submissions >= maxResponses) {
    throw invalid(
      "isClosed",
      `the form has reached its limit of ${maxResponses} responses; raise maxResponses or turn limitResponses off to reopen it`,
    );
  }
}

/**
 * Whether the update changes the auto-close deadline: the new deadline depends on the stored
 * settings, and whether it re-arms the form on the stored deadline, so that needs the stored row.
 */
const changesDeadline = (input: UpdateFormInput) =>
  AUTO_CLOSE_MEMBERS.some((member) => member in input);

/** Whether the settings limit the responses: reopening then needs the count, read under lock. */
const limitsResponses = ({ limitResponses, maxResponses }: FormSettings) =>
  limitResponses && maxResponses !== null;

/**
 * The update, announced by the statement that writes it: it returns once every instance's hosted
 * pages have dropped the form (form-changes.ts).
 */
export async function updateForm(
  db: Database,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
) {
  // The fields' rules are the body's validation: a 422 before the 404 and the plan's 403, as the
  // schema's, and checked once whichever path below applies the update.
  const changes = settingsOf(input);
  if (!FORM_ID.test(formId)) throw formNotFound();
  return announceFormChange(db, formChange.form(formId), (announcement) =>
    writeUpdate(db, owner, formId, input, changes, announcement),
  );
}

async function writeUpdate(
  db: Database,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
  changes: Partial<FormSettings>,
  announcement: Announcement,
) {
  const needsStoredPlanCheck = owner.plan !== "paid" && PAID_MEMBERS.some((m) => m in input);
  const locked = async () => {
    const retried = await db.transaction(async (tx) => {
      if (!(await lockForm(tx, owner.organizationId, formId))) throw formNotFound();
      return applyUpdate(formsInTransaction(tx), owner, formId, input, changes, announcement, true);
    });
    if (!retried) throw formNotFound();
    return retried;
  };
  if (!changesDeadline(input) && !needsStoredPlanCheck) {
    // Nothing here depends on the stored row: one statement merges the change into it, so that
    // the row is locked only while that statement runs. (On the free plan, paid members take the
    // path below, which reads first: the plan's rule depends on the stored settings, and a
    // missing form is a 404 before a 403.)
    const row = await formStatements(db).patch.submit({
      organizationId: owner.organizationId,
      formId,
      name: input.name ?? null,
      settings: changes,
      captchaSecret: input.providerCaptchaSecretKey ?? null,
      isClosed: input.isClosed ?? null,
      announcement,
    });
    if (row) return toFormRecord(row);
    // A missing form (404), or a reopening under a limit of responses: decided under the lock.
    return locked();
  }
  // Most updates meet no other writer: read, then write only if the row is still as it was read,
  // without the round trips of a transaction.
  const updated = await applyUpdate(
    formsInBatches(db),
    owner,
    formId,
    input,
    changes,
    announcement,
    false,
  );
  if (updated) return updated;
  // Another write got there first, or the update needs the count as of now: lock the row and
  // apply this one to what is stored now.
  return locked();
}

/** The updated record, or null when the row changed after it was read (never when `locked`). */
async function applyUpdate(
  forms: FormAccess,
  owner: KeyOwner,
  formId: string,
  input: UpdateFormInput,
  changes: Partial<FormSettings>,
  announcement: Announcement,
  locked: boolean,
): Promise<FormRecord | null> {
  const now = new Date();
  const current = await forms.find({ organizationId: owner.organizationId, formId });
  if (!current) throw formNotFound();
  const stored = { ...DEFAULT_SETTINGS, ...current.settings };
  requirePlanFor(owner, input, stored);
  const settings = { ...stored, ...changes };
  if (input.isClosed === false && limitsResponses(settings)) {
    // A submission may be accepted between this read and the write: the count that decides is
    // the one read under the lock, which intakes into a limited form take too.
    if (!locked) return null;
    requireBelowLimit(settings, current.submissions);
  }
  const touchesDeadline = AUTO_CLOSE_MEMBERS.some((member) => member in input);
  const deadline = autoCloseInstant(settings);
  const previous = autoCloseInstant(stored);
  const closing = nextClosingState(
    { isClosed: current.storedIsClosed, autoCloseAt: current.autoCloseAt },
    {
      isClosed: input.isClosed,
      // Re-sending the same deadline must not close again a form that was reopened after it.
      deadline:
        touchesDeadline && deadline?.getTime() !== previous?.getTime() ? deadline : undefined,
    },
    now,
  );
  const row = await forms.update({
    organizationId: owner.organizationId,
    formId,
    version: locked ? null : current.version,
    name: input.name ?? current.name,
    storedIsClosed: closing.isClosed,
    autoCloseAt: closing.autoCloseAt,
    settings,
    captchaSecret: input.providerCaptchaSecretKey ?? null,
    announcement,
  });
  return row && toFormRecord(row);
}
