import type { SubmittedFields } from "../intake/intake-body.ts";
import type { PageState } from "./field-controls.ts";

/**
 * The form page's state after a refused post: every answer as typed (text values only; files are
 * never sent back) and each field's reason, as the intake gives it (`is required`).
 */
export function refusalState(
  values: SubmittedFields,
  errors: Iterable<readonly [fieldId: string, reason: string]>,
): PageState {
  const typed = new Map<string, string[]>();
  for (const [name, value] of values) {
    const texts = (Array.isArray(value) ? value : [value]).filter(
      (item): item is string => typeof item === "string",
    );
    typed.set(name, [...(typed.get(name) ?? []), ...texts]);
  }
  return { values: typed, errors: new Map(errors) };
}

/** A refusal of a hosted form's answers that names every wrong field, with the values sent. */
export interface FieldRefusal {
  fieldErrors: readonly (readonly [fieldId: string, reason: string])[];
  values: SubmittedFields;
}

/** The refusal an error carries, when it is one of a hosted form's answers (else null). */
export function fieldRefusalOf(error: unknown): FieldRefusal | null {
  if (typeof error !== "object" || error === null) return null;
  const { fieldErrors, values } = error as Partial<FieldRefusal>;
  return Array.isArray(fieldErrors) && Array.isArray(values) ? { fieldErrors, values } : null;
}
