import type { Queryable } from "../db/database.ts";
import type { ReceivedFile } from "../files/uploads.ts";
import type { FormSettings } from "../forms/form-defaults.ts";
import { READS_CLOSED } from "../forms/forms.repository.ts";
import type { Answer } from "../submissions/answer.ts";
import { SUBMISSIONS_SQL } from "../submissions/submission-counts.repository.ts";

/** What the intake needs of a form: its rules, closing state and count, and its owner's plan. */
export interface IntakeForm {
  id: string;
  name: string;
  /** The version of the form's settings: pages rendered from it are kept until it changes. */
  updatedAt: Date;
  organizationId: string;
  plan: "free" | "paid";
  type: "endpoint" | "hosted";
  storedIsClosed: boolean;
  autoCloseAt: Date | null;
  isClosed: boolean;
  submissions: number;
  settings: Partial<FormSettings>;
  captchaSecret: string;
  /**
   * The form's revision (which every write moves but the fold of its count) and its
   * organization's row version (`xmin`) as read: a statement that stores only while both are
   * unchanged acts on exactly the form these checks saw.
   */
  version: string;
  organizationVersion: string;
}

const INTAKE_COLUMNS = `forms.id, forms.name, forms.updated_at AS "updatedAt", forms.organization_id AS "organizationId", o.plan, forms.type,
  forms.is_closed AS "storedIsClosed", forms.auto_close_at AS "autoCloseAt",
  ${READS_CLOSED} AS "isClosed", ${SUBMISSIONS_SQL} AS submissions, forms.settings,
  forms.captcha_secret AS "captchaSecret", forms.revision::text AS version,
  o.xmin::text AS "organizationVersion"`;

/** The form as of `now`. */
export async function findIntakeForm(
  db: Queryable,
  formId: string,
  now: Date,
): Promise<IntakeForm | null> {
  const rows = await db.query<IntakeForm>(
    `SELECT ${INTAKE_COLUMNS}
       FROM forms JOIN organizations o ON o.id = forms.organization_id
      WHERE forms.id = $2`,
    [now, formId],
  );
  return rows[0] ?? null;
}

/**
 * Holds the form's row until the transaction ends; false when it no longer exists. Its count is
 * read by a later statement: one that waited for the lock would still see the slots as they were
 * when it started.
 */
export async function lockForm(db: Queryable, formId: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM forms WHERE id = $1 FOR NO KEY UPDATE",
    [formId],
  );
  return rows.length > 0;
}

export interface NewSubmission {
  id: string;
  formId: string;
  organizationId: string;
  isSpam: boolean;
  spamReason: "honeypot" | "domain" | "captcha_unverified" | null;
  answers: Answer[];
  /** Checked and waiting on disk; stored with the submission, in its transaction. */
  files: ReceivedFile[];
  searchText: string;
  meta: {
    ip: string | null;
    country: string | null;
    userAgent: string | null;
    referrer: string | null;
  };
  createdAt: Date;
}
