import { AppError } from "../http/errors.ts";
import type { SubmittedFields, SubmittedFile } from "../intake/intake-body.ts";
import type { Answer } from "../submissions/answer.ts";
import {
  answerErrors,
  type HostedField,
  hiddenFieldIds,
  isBlank,
  takesAnswers,
} from "./answer-rules.ts";
import { withFieldDefaults } from "./field-defaults.ts";

/**
 * A hosted form's answers refused (check 8). The message names the first wrong field in field
 * order, as a JSON answer must; `fieldErrors` names every one and `values` keeps what was sent,
 * so that a browser's post gets the form again with each reason beside its field.
 */
export class HostedAnswersRefused extends AppError {
  readonly fieldErrors: [fieldId: string, reason: string][];
  readonly values: SubmittedFields;

  constructor(fieldErrors: [string, string][], values: SubmittedFields) {
    const [fieldId, reason] = fieldErrors[0] as [string, string];
    super("unprocessable_entity", `${fieldId}: ${reason}`);
    this.fieldErrors = fieldErrors;
    this.values = values;
  }
}

export interface HostedAnswers<File extends SubmittedFile> {
  /** The visible fields' non-blank answers (optional blank ones are not stored), in the fields' order, with their labels now. */
  answers: Answer[];
  /** The files of visible file fields: those of fields hidden by logic are dropped with them. */
  files: File[];
}

const notAField = (name: string) =>
  new AppError("unprocessable_entity", `${name}: is not a field of this form`);

/**
 * Check 8: a hosted form's answers against its fields and logic. `ignored` are the names that
 * are accepted yet never answers (the honeypot, the captcha token fields, the page's `_token`).
 * Visibility is decided first: a hidden field's answer is dropped unchecked.
 */
export function checkHostedAnswers<File extends SubmittedFile>(
  storedFields: readonly unknown[],
  submittedFields: SubmittedFields,
  files: readonly File[],
  ignored: ReadonlySet<string>,
): HostedAnswers<File> {
  const fields: HostedField[] = storedFields.map(withFieldDefaults);
  const byId = new Map(fields.map((field) => [field.id, field]));
  const values: Record<string, unknown> = {};
  for (const [name, value] of submittedFields) {
    if (ignored.has(name)) continue;
    const field = byId.get(name);
    if (!field || !takesAnswers(field)) throw notAField(name);
    values[name] = value;
  }
  for (const file of files) {
    const field = byId.get(file.field);
    if (!field || !takesAnswers(field)) throw notAField(file.field);
    if (field.subtype !== "file_upload") {
      throw new AppError("unprocessable_entity", `${file.field}: does not take files`);
    }
  }
  const submitted = { answers: values, fileFieldIds: new Set(files.map((file) => file.field)) };
  const errors = answerErrors(fields, submitted);
  if (errors.length > 0) {
    throw new HostedAnswersRefused(
      errors.map((error) => [error.fieldId, error.message]),
      submittedFields,
    );
  }
  const hidden = hiddenFieldIds(fields, submitted);
  const answers = fields
    .filter((field) => !hidden.has(field.id) && field.subtype !== "file_upload")
    .filter((field) => takesAnswers(field) && !isBlank(field, values[field.id], false))
    .map((field) => ({ id: field.id, label: field.label, value: values[field.id] }));
  return { answers, files: files.filter((file) => !hidden.has(file.field)) };
}
