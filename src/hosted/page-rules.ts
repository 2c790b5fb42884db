/**
 * The page's rules, run in the browser (served after node:module's stripTypeScriptTypes) and in
 * tests: which fields the logic hides, where Next leads, what is wrong with an answer. No imports
 * and no Node or DOM API, so that the same text runs in both.
 */

export interface RuleField {
  id: string;
  type: string;
  subtype: string;
  required: boolean;
  options: { id: string; value: string }[];
  ratingCount: number;
  scaleMin: number;
  scaleMax: number;
  logic: { rules: Rule[] };
}

interface Rule {
  action: string;
  when: { combinator: string; conditions: Condition[] };
  targetFieldId: string;
  targetFieldIds: string[];
  targetPageId: string;
}

interface Condition {
  sourceFieldId: string;
  operator: string;
  value: string;
}

export type AnswerValue = string | string[] | undefined;
export type Answers = Record<string, AnswerValue>;

const NUMBER = /^-?\d+(\.\d+)?$/;

const valuesOf = (value: AnswerValue): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : value.trim() === "" ? [] : [value];

function holds(condition: Condition, answers: Answers, hidden: Set<string>): boolean {
  const values = hidden.has(condition.sourceFieldId)
    ? []
    : valuesOf(answers[condition.sourceFieldId]);
  const expected = condition.value;
  const number = (text: string) => (NUMBER.test(text.trim()) ? Number(text) : Number.NaN);
  switch (condition.operator) {
    case "is_empty":
      return values.length === 0;
    case "is_not_empty":
      return values.length > 0;
    case "equals":
      return values.some((v) => v === expected);
    case "not_equals":
      return !values.some((v) => v === expected);
    case "contains":
      return values.some((v) => v.includes(expected));
    case "not_contains":
      return !values.some((v) => v.includes(expected));
    case "greater_than":
      return values.some((v) => number(v) > number(expected));
    case "less_than":
      return values.some((v) => number(v) < number(expected));
    default:
      return false;
  }
}

function ruleHolds(rule: Rule, answers: Answers, hidden: Set<string>): boolean {
  const results = rule.when.conditions.map((c) => holds(c, answers, hidden));
  return rule.when.combinator === "any" ? results.some(Boolean) : results.every(Boolean);
}

const targetsOf = (rule: Rule) =>
  rule.targetFieldIds.length > 0
    ? rule.targetFieldIds
    : rule.targetFieldId
      ? [rule.targetFieldId]
      : [];

/**
 * The fields the logic hides: a `hide_field` rule holds, or `show_field` rules exist and none
 * holds. A hidden field counts as empty, so this repeats until nothing changes.
 */
export function hiddenFields(fields: readonly RuleField[], answers: Answers): Set<string> {
  let hidden = new Set<string>();
  for (let round = 0; round <= fields.length; round++) {
    const shown = new Map<string, boolean>();
    const hides = new Set<string>();
    for (const field of fields) {
      for (const rule of field.logic.rules) {
        if (rule.action !== "show_field" && rule.action !== "hide_field") continue;
        const holdsNow = !hidden.has(field.id) && ruleHolds(rule, answers, hidden);
        for (const target of targetsOf(rule)) {
          if (rule.action === "hide_field" && holdsNow) hides.add(target);
          if (rule.action === "show_field")
            shown.set(target, (shown.get(target) ?? false) || holdsNow);
        }
      }
    }
    const next = new Set(hides);
    for (const [target, anyHolds] of shown) if (!anyHolds) next.add(target);
    if (next.size === hidden.size && [...next].every((id) => hidden.has(id))) return next;
    hidden = next;
  }
  return hidden;
}

/**
 * Where Next leads from step `index` (steps: the field ids of each step, a page field first):
 * the page of the first `jump_to_page` rule that holds in the step, else the next step; null at
 * the last step.
 */
export function jumpTarget(
  fields: readonly RuleField[],
  steps: readonly (readonly string[])[],
  index: number,
  answers: Answers,
): number | null {
  const hidden = hiddenFields(fields, answers);
  const inStep = new Set(steps[index] ?? []);
  for (const field of fields) {
    if (!inStep.has(field.id) || hidden.has(field.id)) continue;
    for (const rule of field.logic.rules) {
      if (rule.action !== "jump_to_page" || !ruleHolds(rule, answers, hidden)) continue;
      const target = steps.findIndex((step) => step[0] === rule.targetPageId);
      if (target > index) return target;
    }
  }
  return index + 1 < steps.length ? index + 1 : null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^[0-9+()\-. ]*[0-9][0-9+()\-. ]*$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

function isWebsite(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const integerIn = (text: string, min: number, max: number) =>
  /^-?\d+$/.test(text) && Number(text) >= min && Number(text) <= max;

/** What is wrong with a visible field's answer, as the intake says it (`is required`), or null. */
export function checkAnswer(field: RuleField, value: AnswerValue): string | null {
  if (field.subtype === "heading" || field.subtype === "page") return null;
  const values = valuesOf(value);
  if (values.length === 0) return field.required ? "is required" : null;
  const text = values[0] ?? "";
  const options = field.options.map((o) => o.value);
  switch (field.subtype) {
    case "email":
      return EMAIL.test(text) ? null : "must be an email address";
    case "number":
      return NUMBER.test(text) ? null : "must be a number";
    case "website":
      return isWebsite(text) ? null : "must be an http:// or https:// URL";
    case "date":
      return isDate(text) ? null : "must be a date (YYYY-MM-DD)";
    case "phone":
      return PHONE.test(text) ? null : "must be a phone number";
    case "single_choice":
    case "dropdown":
      return options.includes(text) ? null : "must be one of the choices";
    case "multiple_choice":
      return values.every((v) => options.includes(v)) ? null : "must be among the choices";
    case "rating":
      return integerIn(text, 1, field.ratingCount)
        ? null
        : `must be from 1 to ${field.ratingCount}`;
    case "scale":
      return integerIn(text, field.scaleMin, field.scaleMax)
        ? null
        : `must be from ${field.scaleMin} to ${field.scaleMax}`;
    case "short_answer":
      return text.length <= 1000 ? null : "must be at most 1000 characters";
    case "long_answer":
      return text.length <= 10000 ? null : "must be at most 10000 characters";
    default:
      return null;
  }
}

/** The intake's reason (`is required`, `must be …`) as a sentence beside the field. */
export function describeProblem(reason: string): string {
  if (reason === "is required") return "Please answer this question.";
  return `This answer ${reason}.`;
}
