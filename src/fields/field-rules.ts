import { invalid } from "../http/errors.ts";
import type { HostedField } from "./answer-rules.ts";
import { DEFAULT_CONTROL, withFieldDefaults } from "./field-defaults.ts";
import { checkLogic } from "./logic-rules.ts";

export const SUBTYPES = Object.keys(DEFAULT_CONTROL);
const CHOICE_SUBTYPES = new Set(["single_choice", "multiple_choice", "dropdown"]);
export const FIELD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const ID_RULE = "must be 1-64 characters of A-Z, a-z, 0-9, _ and -";

/** The controls that suit each subtype, its default first: the page renders the one chosen. */
const CONTROLS: Readonly<Record<string, readonly string[]>> = {
  single_choice: ["radio", "select"],
  dropdown: ["select", "radio"],
  scale: ["range", "radio"],
};
const controlsOf = (subtype: string) => CONTROLS[subtype] ?? [DEFAULT_CONTROL[subtype] as string];

/** The value every subtype that does not use a member must leave it at (or leave it out). */
const UNUSED: Readonly<Record<string, { value: unknown; usedBy: (subtype: string) => boolean }>> = {
  options: { value: [], usedBy: (subtype) => CHOICE_SUBTYPES.has(subtype) },
  ratingCount: { value: 5, usedBy: (subtype) => subtype === "rating" },
  scaleMin: { value: 1, usedBy: (subtype) => subtype === "scale" },
  scaleMax: { value: 5, usedBy: (subtype) => subtype === "scale" },
  minLabel: { value: "", usedBy: (subtype) => subtype === "scale" },
  maxLabel: { value: "", usedBy: (subtype) => subtype === "scale" },
};

const isBlank = (text: string) => text.trim() === "";
const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function checkOptions(field: HostedField, at: string) {
  if (field.options.length === 0)
    throw invalid(`${at}.options`, `is required for ${field.subtype}`);
  const ids = new Set<string>();
  const values = new Set<string>();
  field.options.forEach((option, k) => {
    const path = `${at}.options[${k}]`;
    if (!FIELD_ID.test(option.id)) throw invalid(`${path}.id`, ID_RULE);
    if (ids.has(option.id)) throw invalid(`${path}.id`, "must be unique in the field");
    if (isBlank(option.value)) throw invalid(`${path}.value`, "must not be blank");
    if (values.has(option.value)) throw invalid(`${path}.value`, "must be unique in the field");
    ids.add(option.id);
    values.add(option.value);
  });
}

function wholeIn(value: number, min: number, max: number) {
  return Number.isInteger(value) && value >= min && value <= max;
}

/** The rules of one field's own members (its logic is checked with the whole form). */
function checkField(sent: Record<string, unknown>, field: HostedField, at: string) {
  if (!FIELD_ID.test(field.id)) throw invalid(`${at}.id`, ID_RULE);
  if (!SUBTYPES.includes(field.subtype)) {
    throw invalid(`${at}.subtype`, `must be one of ${SUBTYPES.join(", ")}`);
  }
  if (isBlank(field.label)) throw invalid(`${at}.label`, "must not be blank");
  const controls = controlsOf(field.subtype);
  if (!controls.includes(field.type)) {
    throw invalid(`${at}.type`, `must be one of ${controls.join(", ")} for ${field.subtype}`);
  }
  for (const [member, rule] of Object.entries(UNUSED)) {
    if (rule.usedBy(field.subtype) || !Object.hasOwn(sent, member)) continue;
    if (!sameValue(sent[member], rule.value)) {
      throw invalid(`${at}.${member}`, `not used by ${field.subtype}`);
    }
  }
  if (CHOICE_SUBTYPES.has(field.subtype)) checkOptions(field, at);
  if (field.subtype === "rating" && !wholeIn(field.ratingCount, 3, 10)) {
    throw invalid(`${at}.ratingCount`, "must be a whole number from 3 to 10");
  }
  if (field.subtype === "scale") {
    if (!wholeIn(field.scaleMin, 0, 1)) throw invalid(`${at}.scaleMin`, "must be 0 or 1");
    if (!wholeIn(field.scaleMax, 2, 10)) {
      throw invalid(`${at}.scaleMax`, "must be a whole number from 2 to 10");
    }
  }
}

/**
 * hosted-forms.md §1 on a write's `fields` (shape and sizes already checked by the schema):
 * 422 `fields[i].<member>: <reason>` for the first rule broken. Answers the fields as stored and
 * read: every member present, defaults filled.
 */
export function checkFields(sent: readonly Record<string, unknown>[]): HostedField[] {
  const fields = sent.map(withFieldDefaults);
  const seen = new Set<string>();
  fields.forEach((field, i) => {
    checkField(sent[i] as Record<string, unknown>, field, `fields[${i}]`);
    if (seen.has(field.id)) throw invalid(`fields[${i}].id`, "must be unique in the form");
    seen.add(field.id);
  });
  checkLogic(fields);
  return fields;
}
