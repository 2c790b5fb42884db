import type { HostedField, LogicRule } from "../../src/fields/answer-rules.ts";
import { DEFAULT_CONTROL } from "../../src/fields/field-defaults.ts";

/** A field with every member, defaults filled, as reads carry it. */
export function field(id: string, subtype: string, more: Partial<HostedField> = {}): HostedField {
  return {
    id,
    label: `Label of ${id}`,
    type: DEFAULT_CONTROL[subtype] ?? "text",
    subtype,
    required: false,
    showDescription: false,
    description: "",
    options: [],
    ratingCount: 5,
    scaleMin: 1,
    scaleMax: 5,
    minLabel: "",
    maxLabel: "",
    logic: { rules: [] },
    ...more,
  };
}

export const options = (...values: string[]) =>
  values.map((value, index) => ({ id: `o${index}`, value }));

/** A rule with one condition per `[source, operator, value]`. */
export function rule(
  id: string,
  action: string,
  targets: { fields?: string[]; field?: string; page?: string },
  conditions: [string, string, string][],
  combinator = "all",
): LogicRule {
  return {
    id,
    action,
    when: {
      combinator,
      conditions: conditions.map(([sourceFieldId, operator, value], index) => ({
        id: `${id}c${index}`,
        sourceFieldId,
        operator,
        value,
      })),
    },
    targetFieldId: targets.field ?? "",
    targetFieldIds: targets.fields ?? [],
    targetPageId: targets.page ?? "",
  };
}
