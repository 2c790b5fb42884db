import { Type } from "typebox";

const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });

/**
 * A hosted form's field as stored and read. Writes are checked for shape and size here; the rules
 * between members (subtypes, options, logic) come with the hosted forms.
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
const LogicRule = Type.Object(
  {
    id: Text(64, "Rule id"),
    action: Text(50, "What the rule does"),
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
  },
  Strict,
);
export const FormField = Type.Object(
  {
    id: Text(64, "Field id"),
    label: Text(500, "Label"),
    type: Text(50, "HTML control"),
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
  },
  Strict,
);

export const MAX_FIELDS = 200;
