import { invalid } from "../http/errors.ts";
import { type HostedField, type LogicRule, ruleTargets, takesAnswers } from "./answer-rules.ts";

const ACTIONS = ["show_field", "hide_field", "jump_to_page"];
const COMBINATORS = ["all", "any"];
const OPERATORS = [
  "is_empty",
  "is_not_empty",
  "equals",
  "not_equals",
  "contains",
  "not_contains",
  "greater_than",
  "less_than",
];
const oneOf = (values: string[]) => `must be one of ${values.join(", ")}`;

function checkTargets(
  rule: LogicRule,
  holder: HostedField,
  byId: Map<string, HostedField>,
  at: string,
) {
  if (rule.action === "jump_to_page") {
    const ids = [...byId.keys()];
    const page = byId.get(rule.targetPageId);
    const [holderIndex, pageIndex] = [ids.indexOf(holder.id), ids.indexOf(rule.targetPageId)];
    if (page?.subtype !== "page" || pageIndex <= holderIndex) {
      throw invalid(
        `${at}.targetPageId`,
        "must be a page field after the field that holds the rule",
      );
    }
    return;
  }
  if (ruleTargets(rule).length === 0) {
    throw invalid(`${at}.targetFieldIds`, "must name at least one field (or targetFieldId)");
  }
  const named: [string, string][] = [
    ...rule.targetFieldIds.map((id, t): [string, string] => [`${at}.targetFieldIds[${t}]`, id]),
    ...(rule.targetFieldId === ""
      ? []
      : [[`${at}.targetFieldId`, rule.targetFieldId] as [string, string]]),
  ];
  for (const [path, id] of named) {
    if (!byId.has(id)) throw invalid(path, `is not a field of this form: ${id}`);
    if (id === holder.id) throw invalid(path, "may not target the field that holds the rule");
  }
}

/**
 * The logic rules of every field: ids unique in the form, known actions and operators, every id a
 * rule names existing (so an update that removes a field a rule names is refused here).
 */
export function checkLogic(fields: readonly HostedField[]) {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const ruleIds = new Set<string>();
  fields.forEach((holder, i) => {
    holder.logic.rules.forEach((rule, k) => {
      const at = `fields[${i}].logic.rules[${k}]`;
      if (rule.id === "") throw invalid(`${at}.id`, "must not be empty");
      if (ruleIds.has(rule.id)) throw invalid(`${at}.id`, "must be unique in the form");
      ruleIds.add(rule.id);
      if (!ACTIONS.includes(rule.action)) throw invalid(`${at}.action`, oneOf(ACTIONS));
      checkTargets(rule, holder, byId, at);
      const { combinator, conditions } = rule.when;
      if (!COMBINATORS.includes(combinator)) {
        throw invalid(`${at}.when.combinator`, oneOf(COMBINATORS));
      }
      if (conditions.length === 0) throw invalid(`${at}.when.conditions`, "must not be empty");
      conditions.forEach((condition, c) => {
        const path = `${at}.when.conditions[${c}]`;
        if (condition.id === "") throw invalid(`${path}.id`, "must not be empty");
        if (!OPERATORS.includes(condition.operator)) {
          throw invalid(`${path}.operator`, oneOf(OPERATORS));
        }
        const source = byId.get(condition.sourceFieldId);
        if (!source || !takesAnswers(source)) {
          throw invalid(`${path}.sourceFieldId`, "must be a field of this form that takes answers");
        }
      });
    });
  });
}
