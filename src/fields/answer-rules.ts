/**
 * The rules over a hosted form's answers: which fields logic hides, the steps and where Next
 * goes, and each field's error. The intake and the hosted page's script run this very file, so
 * it has no runtime imports and only erasable TypeScript (the page strips the types and serves it
 * as-is). docs/decisions.md ("Hosted answers: visibility, steps and values") defines the order.
 */

export interface FieldOption {
  id: string;
  value: string;
}

export interface LogicCondition {
  id: string;
  sourceFieldId: string;
  operator: string;
  value: string;
}

export interface LogicRule {
  id: string;
  action: string;
  when: { combinator: string; conditions: LogicCondition[] };
  targetFieldId: string;
  targetFieldIds: string[];
  targetPageId: string;
}

/** A field with every member of the spec's Form field table, defaults filled. */
export interface HostedField {
  id: string;
  label: string;
  type: string;
  subtype: string;
  required: boolean;
  showDescription: boolean;
  description: string;
  options: FieldOption[];
  ratingCount: number;
  scaleMin: number;
  scaleMax: number;
  minLabel: string;
  maxLabel: string;
  logic: { rules: LogicRule[] };
}

/** Answers by field id as a body gives them: text, repeated names as arrays, JSON values. */
export type Answers = Readonly<Record<string, unknown>>;

/** What was submitted: the answers and the ids of the fields that received at least one file. */
export interface Submitted {
  answers: Answers;
  fileFieldIds: ReadonlySet<string>;
}

export interface FieldError {
  fieldId: string;
  /** The reason, as the intake writes it after `<field id>: `. */
  message: string;
}

/** Subtypes that take no answer: a heading is text, a page field a page break. */
export const ANSWERLESS_SUBTYPES: readonly string[] = ["heading", "page"];
export const MAX_SHORT_ANSWER_LENGTH = 1_000;
export const MAX_LONG_ANSWER_LENGTH = 10_000;

export function takesAnswers(field: HostedField): boolean {
  return !ANSWERLESS_SUBTYPES.includes(field.subtype);
}

const hasOwn = (answers: Answers, id: string) => Object.hasOwn(answers, id);

/** Missing, empty, only spaces, no choice, no file. */
export function isBlank(field: HostedField, value: unknown, hasFile: boolean): boolean {
  if (field.subtype === "file_upload") return !hasFile && isBlankValue(value);
  return isBlankValue(value);
}

function isBlankValue(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.every(isBlankValue);
  return false;
}

/** The values a condition compares: none when blank, each choice of a list, a file as "". */
function conditionValues(field: HostedField, submitted: Submitted): string[] {
  const value = hasOwn(submitted.answers, field.id) ? submitted.answers[field.id] : undefined;
  if (field.subtype === "file_upload") return submitted.fileFieldIds.has(field.id) ? [""] : [];
  if (isBlankValue(value)) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((item) => !isBlankValue(item)).map((item) => String(item));
}

const NUMBER = /^-?\d+(\.\d+)?$/;

function numberOf(text: string): number | null {
  return NUMBER.test(text.trim()) ? Number(text.trim()) : null;
}

function conditionHolds(condition: LogicCondition, values: string[]): boolean {
  const expected = condition.value;
  switch (condition.operator) {
    case "is_empty":
      return values.length === 0;
    case "is_not_empty":
      return values.length > 0;
    case "equals":
      return values.some((value) => value === expected);
    case "not_equals":
      return !values.some((value) => value === expected);
    case "contains":
      return values.some((value) => value.includes(expected));
    case "not_contains":
      return !values.some((value) => value.includes(expected));
    case "greater_than":
    case "less_than": {
      const bound = numberOf(expected);
      if (bound === null || values.length !== 1) return false;
      const actual = numberOf(values[0] as string);
      if (actual === null) return false;
      return condition.operator === "greater_than" ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

function ruleHolds(
  rule: LogicRule,
  byId: ReadonlyMap<string, HostedField>,
  submitted: Submitted,
  isHidden: (fieldId: string) => boolean,
): boolean {
  const results = rule.when.conditions.map((condition) => {
    const source = byId.get(condition.sourceFieldId);
    const values = !source || isHidden(source.id) ? [] : conditionValues(source, submitted);
    return conditionHolds(condition, values);
  });
  return rule.when.combinator === "any" ? results.some(Boolean) : results.every(Boolean);
}

export function ruleTargets(rule: LogicRule): string[] {
  const targets = [...rule.targetFieldIds];
  if (rule.targetFieldId !== "" && !targets.includes(rule.targetFieldId)) {
    targets.push(rule.targetFieldId);
  }
  return targets;
}

/**
 * Decides show/hide logic for fields not already forced hidden (those on skipped steps). Fields
 * are decided on demand and remembered; a field met again while it is being decided (a cycle of
 * rules) counts as visible for that comparison.
 */
function visibilityJudge(
  fields: readonly HostedField[],
  submitted: Submitted,
  forcedHidden: ReadonlySet<string>,
): (fieldId: string) => boolean {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const shownBy = new Map<string, LogicRule[]>();
  const hiddenBy = new Map<string, LogicRule[]>();
  for (const field of fields) {
    for (const rule of field.logic.rules) {
      const index =
        rule.action === "show_field" ? shownBy : rule.action === "hide_field" ? hiddenBy : null;
      if (!index) continue;
      for (const target of ruleTargets(rule))
        index.set(target, [...(index.get(target) ?? []), rule]);
    }
  }
  const decided = new Map<string, boolean>();
  const deciding = new Set<string>();

  function isHidden(fieldId: string): boolean {
    if (forcedHidden.has(fieldId)) return true;
    const known = decided.get(fieldId);
    if (known !== undefined) return known;
    if (deciding.has(fieldId)) return false;
    deciding.add(fieldId);
    const hides = hiddenBy.get(fieldId) ?? [];
    const shows = shownBy.get(fieldId) ?? [];
    const holds = (rule: LogicRule) => ruleHolds(rule, byId, submitted, isHidden);
    const hidden = hides.some(holds) || (shows.length > 0 && !shows.some(holds));
    deciding.delete(fieldId);
    decided.set(fieldId, hidden);
    return hidden;
  }
  return isHidden;
}

/** The steps: the fields before the first `page` field, then each `page` field with those after it. */
export function splitSteps(fields: readonly HostedField[]): HostedField[][] {
  const steps: HostedField[][] = [[]];
  for (const field of fields) {
    if (field.subtype === "page") steps.push([field]);
    else (steps[steps.length - 1] as HostedField[]).push(field);
  }
  return steps;
}

interface Walk {
  steps: HostedField[][];
  /** Steps visited in order; the last is where the walk stopped. */
  path: number[];
  /** The step Next goes to from the step the walk stopped at, or null: the form ends there. */
  next: number | null;
}

/**
 * Walks the steps from the first, as the page does: on each step, its visible fields' jump rules
 * are tried in field order and the first that holds goes to its page's step; otherwise the next
 * step. Steps with no visible field (page field aside) are passed over. Fields on steps passed
 * over count as hidden from then on. With `stopAt`, the walk stops on that step.
 */
function walkSteps(fields: readonly HostedField[], submitted: Submitted, stopAt?: number): Walk {
  const steps = splitSteps(fields);
  const stepOfPage = new Map<string, number>();
  steps.forEach((step, index) => {
    if (step[0]?.subtype === "page") stepOfPage.set(step[0].id, index);
  });
  const byId = new Map(fields.map((field) => [field.id, field]));
  const path: number[] = [];
  const skipped = new Set<string>();
  const judgeAt = (step: number) => {
    for (let earlier = 0; earlier < step; earlier++) {
      if (!path.includes(earlier)) for (const field of steps[earlier] ?? []) skipped.add(field.id);
    }
    return visibilityJudge(fields, submitted, skipped);
  };
  const firstShownFrom = (from: number): number | null => {
    for (let step = from; step < steps.length; step++) {
      const isHidden = judgeAt(step);
      const shown = (steps[step] ?? []).some((f) => f.subtype !== "page" && !isHidden(f.id));
      if (shown || step === stopAt) return step;
    }
    return null;
  };

  let current = firstShownFrom(0);
  while (current !== null) {
    path.push(current);
    const isHidden = judgeAt(current);
    let target = current + 1;
    jump: for (const holder of steps[current] ?? []) {
      if (isHidden(holder.id)) continue;
      for (const rule of holder.logic.rules) {
        const page = stepOfPage.get(rule.targetPageId);
        if (rule.action !== "jump_to_page" || page === undefined || page <= current) continue;
        if (ruleHolds(rule, byId, submitted, isHidden)) {
          target = page;
          break jump;
        }
      }
    }
    const next = firstShownFrom(target);
    if (current === stopAt) return { steps, path, next };
    // A jump over the step asked about: answer for that step all the same.
    current =
      stopAt !== undefined && current < stopAt && (next ?? Infinity) > stopAt ? stopAt : next;
  }
  return { steps, path, next: null };
}

/** The steps a respondent passes through, in order, for these answers. */
export function stepPath(fields: readonly HostedField[], submitted: Submitted): number[] {
  return walkSteps(fields, submitted).path;
}

/** The step Next goes to from `step`, or null when `step` is the last: the form submits there. */
export function nextStep(
  fields: readonly HostedField[],
  submitted: Submitted,
  step: number,
): number | null {
  return walkSteps(fields, submitted, step).next;
}

/** The ids of the fields hidden for these answers: by show/hide logic or on a step skipped. */
export function hiddenFieldIds(fields: readonly HostedField[], submitted: Submitted): Set<string> {
  const { steps, path } = walkSteps(fields, submitted);
  const skipped = new Set<string>();
  steps.forEach((step, index) => {
    if (!path.includes(index)) for (const field of step) skipped.add(field.id);
  });
  const isHidden = visibilityJudge(fields, submitted, skipped);
  return new Set(fields.filter((field) => isHidden(field.id)).map((field) => field.id));
}

const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const PHONE = /^[\d+().\- ]*\d[\d+().\- ]*$/;
const INTEGER = /^-?\d+$/;

function isWebsite(text: string): boolean {
  if (!/^https?:\/\//i.test(text)) return false;
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

/** A whole number in `min..max`, sent as a JSON number or a numeric string. */
function wholeNumberError(value: unknown, min: number, max: number): string | null {
  const reason = `must be a whole number from ${min} to ${max}`;
  const number =
    typeof value === "number"
      ? value
      : typeof value === "string" && INTEGER.test(value)
        ? Number(value)
        : NaN;
  return Number.isInteger(number) && number >= min && number <= max ? null : reason;
}

function choiceError(field: HostedField, value: unknown): string | null {
  const values = field.options.map((option) => option.value);
  if (field.subtype !== "multiple_choice") {
    return typeof value === "string" && values.includes(value)
      ? null
      : "must be one of the options";
  }
  const chosen = Array.isArray(value) ? value : [value];
  if (!chosen.every((item) => typeof item === "string" && values.includes(item))) {
    return "must be options of this field";
  }
  return new Set(chosen).size === chosen.length ? null : "must not repeat an option";
}

/** The error of a non-blank value that is single text (or, for numbers, a JSON number). */
function textError(field: HostedField, value: unknown): string | null {
  if (field.subtype === "number" && typeof value === "number") {
    return Number.isFinite(value) ? null : "must be a number";
  }
  if (typeof value !== "string") return "must be text";
  const limit = field.subtype === "long_answer" ? MAX_LONG_ANSWER_LENGTH : MAX_SHORT_ANSWER_LENGTH;
  if (value.length > limit) return `must be at most ${limit} characters`;
  switch (field.subtype) {
    case "email":
      return EMAIL.test(value) ? null : "must be an email address";
    case "number":
      return NUMBER.test(value) ? null : "must be a number";
    case "website":
      return isWebsite(value) ? null : "must be an absolute http(s) URL";
    case "date":
      return isDate(value) ? null : "must be a date (YYYY-MM-DD)";
    case "phone":
      return PHONE.test(value) ? null : "must be a phone number";
    case "file_upload":
      return "must be a file";
    default:
      return null;
  }
}

/**
 * The error of one visible field's answer, or null when it is fine. A blank answer is an error
 * only when the field is required; a field that takes no answer has none.
 */
export function fieldError(field: HostedField, value: unknown, hasFile: boolean): string | null {
  if (!takesAnswers(field)) return null;
  if (isBlank(field, value, hasFile)) return field.required ? "is required" : null;
  if (field.subtype === "file_upload" && isBlankValue(value)) return null;
  switch (field.subtype) {
    case "single_choice":
    case "dropdown":
    case "multiple_choice":
      return choiceError(field, value);
    case "rating":
      return wholeNumberError(value, 1, field.ratingCount);
    case "scale":
      return wholeNumberError(value, field.scaleMin, field.scaleMax);
    default:
      return Array.isArray(value) ? "must be a single value" : textError(field, value);
  }
}

/** Every visible field's error, in field order (the first is the one a JSON answer names). */
export function answerErrors(fields: readonly HostedField[], submitted: Submitted): FieldError[] {
  const hidden = hiddenFieldIds(fields, submitted);
  const errors: FieldError[] = [];
  for (const field of fields) {
    if (hidden.has(field.id)) continue;
    const value = hasOwn(submitted.answers, field.id) ? submitted.answers[field.id] : undefined;
    const message = fieldError(field, value, submitted.fileFieldIds.has(field.id));
    if (message !== null) errors.push({ fieldId: field.id, message });
  }
  return errors;
}

/** The intake's reason (`is required`, `must be …`) as a sentence beside the field. */
export function describeProblem(reason: string): string {
  if (reason === "is required") return "Please answer this question.";
  return `This answer ${reason}.`;
}
