import type { HostedField, LogicRule } from "./answer-rules.ts";

/** The HTML control each subtype renders when the field does not name one. */
export const DEFAULT_CONTROL: Readonly<Record<string, string>> = {
  short_answer: "text",
  long_answer: "textarea",
  email: "email",
  phone: "tel",
  number: "number",
  website: "url",
  date: "date",
  single_choice: "radio",
  multiple_choice: "checkbox",
  dropdown: "select",
  rating: "rating",
  scale: "range",
  file_upload: "file",
  heading: "heading",
  page: "page",
};

/**
 * A stored field with every member of the spec's Form field table: the defaults fill what a
 * write left out, so that every read, the page and the intake see the same whole field.
 */
export function withFieldDefaults(stored: unknown): HostedField {
  const field = stored as Partial<HostedField> & { id: string; subtype: string; label: string };
  return {
    id: field.id,
    label: field.label,
    type: field.type ?? DEFAULT_CONTROL[field.subtype] ?? "text",
    subtype: field.subtype,
    required: field.required ?? false,
    showDescription: field.showDescription ?? false,
    description: field.description ?? "",
    options: field.options ?? [],
    ratingCount: field.ratingCount ?? 5,
    scaleMin: field.scaleMin ?? 1,
    scaleMax: field.scaleMax ?? 5,
    minLabel: field.minLabel ?? "",
    maxLabel: field.maxLabel ?? "",
    logic: { rules: (field.logic?.rules ?? []).map(withRuleDefaults) },
  };
}

/** A rule's targets default to none: a show or hide rule names fields, a jump a page. */
function withRuleDefaults(rule: Partial<LogicRule>): LogicRule {
  return {
    ...(rule as LogicRule),
    targetFieldId: rule.targetFieldId ?? "",
    targetFieldIds: rule.targetFieldIds ?? [],
    targetPageId: rule.targetPageId ?? "",
  };
}
