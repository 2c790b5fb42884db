import { Type } from "typebox";

const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });

/**
 * A hosted form's field, as written and as read. Writes are checked for shape and size here; the
 * rules of hosted-forms.md §1 (subtypes, controls, options, logic references) in
 * src/fields/field-rules.ts.
 */
const Strict = { additionalProperties: false } as const;
const FieldOption = Type.Object(
  { id: Text(64, "Option id"), value: Text(500, "Option value") },
  Strict,
);
const LogicCondition = Type.Object(
  {
    id: Text(64, "Condition id"),
    sourceFieldId: Text(64, "Field whose answer is compared"),
    operator: Text(50, "Comparison"),
    value: Text(1_000, "Value compared with"),
  },
  Strict,
);
const ruleMembers = {
  id: Text(64, "Rule id"),
  action: Text(50, "show_field, hide_field or jump_to_page"),
  when: Type.Object(
    {
      combinator: Text(10, "all or any"),
      conditions: Type.Array(LogicCondition, { maxItems: 100 }),
    },
    Strict,
  ),
  targetFieldId: Text(64, "Field shown or hidden"),
  targetFieldIds: Type.Array(Text(64, "Field shown or hidden"), { maxItems: 200 }),
  targetPageId: Text(64, "Page jumped to"),
};
const LogicRule = Type.Object(ruleMembers, Strict);
/** A rule as written: its targets default to "", [] and "". */
const LogicRuleInput = Type.Object(
  {
    ...ruleMembers,
    targetFieldId: Type.Optional(ruleMembers.targetFieldId),
    targetFieldIds: Type.Optional(ruleMembers.targetFieldIds),
    targetPageId: Type.Optional(ruleMembers.targetPageId),
  },
  Strict,
);
const fieldMembers = {
  id: Text(64, "Field id: 1-64 of A-Z a-z 0-9 _ -, unique in the form"),
  label: Text(500, "Label"),
  type: Text(50, "HTML control; defaults from the subtype"),
  subtype: Text(50, "Kind of answer"),
  required: Type.Boolean(),
  showDescription: Type.Boolean(),
  description: Text(2_000, "Description"),
  ratingCount: Type.Number(),
  scaleMin: Type.Number(),
  scaleMax: Type.Number(),
  minLabel: Text(100, "Label of the scale's low end"),
  maxLabel: Text(100, "Label of the scale's high end"),
  options: Type.Array(FieldOption, { maxItems: 100 }),
  logic: Type.Object({ rules: Type.Array(LogicRule, { maxItems: 100 }) }, Strict),
};

/** A field as every read carries it: all 14 members, defaults filled. */
export const FormField = Type.Object(fieldMembers, Strict);

/** A field as written: `id`, `subtype` and `label`; the rest defaults (src/fields/field-defaults.ts). */
export const FormFieldInput = Type.Object(
  {
    id: fieldMembers.id,
    subtype: fieldMembers.subtype,
    label: fieldMembers.label,
    type: Type.Optional(fieldMembers.type),
    required: Type.Optional(fieldMembers.required),
    showDescription: Type.Optional(fieldMembers.showDescription),
    description: Type.Optional(fieldMembers.description),
    ratingCount: Type.Optional(fieldMembers.ratingCount),
    scaleMin: Type.Optional(fieldMembers.scaleMin),
    scaleMax: Type.Optional(fieldMembers.scaleMax),
    minLabel: Type.Optional(fieldMembers.minLabel),
    maxLabel: Type.Optional(fieldMembers.maxLabel),
    options: Type.Optional(fieldMembers.options),
    logic: Type.Optional(
      Type.Object({ rules: Type.Array(LogicRuleInput, { maxItems: 100 }) }, Strict),
    ),
  },
  Strict,
);

export const MAX_FIELDS = 200;
