/**
 * A hosted form with every subtype, a page break and logic: the fixture of the page tests, the
 * browser tests and `npm run screenshots`.
 */
import { DEFAULT_CONTROL } from "../../src/fields/field-defaults.ts";

type Field = Record<string, unknown> & { id: string; subtype: string; label: string };

/** A field with all 14 members: the given ones over the defaults of its subtype. */
export function field(given: Field): Record<string, unknown> {
  return {
    type: DEFAULT_CONTROL[given.subtype],
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
    ...given,
  };
}

const options = (...values: string[]) => values.map((value, i) => ({ id: `o${i + 1}`, value }));

/** Shows `target` when `source` equals `value`. */
export const showWhen = (id: string, source: string, value: string, target: string) => ({
  id,
  action: "show_field",
  when: {
    combinator: "all",
    conditions: [{ id: `${id}c`, sourceFieldId: source, operator: "equals", value }],
  },
  targetFieldId: "",
  targetFieldIds: [target],
  targetPageId: "",
});

export const SAMPLE_FIELDS = [
  field({ id: "name", subtype: "short_answer", label: "Your name", required: true }),
  field({
    id: "email",
    subtype: "email",
    label: "Email",
    required: true,
    showDescription: true,
    description: "We reply within a day.",
  }),
  field({ id: "phone", subtype: "phone", label: "Phone" }),
  field({
    id: "role",
    subtype: "single_choice",
    label: "What best describes you?",
    required: true,
    options: options("Designer", "Developer", "Other"),
    logic: { rules: [showWhen("r1", "role", "Other", "role_other")] },
  }),
  field({ id: "role_other", subtype: "short_answer", label: "Tell us more about your role" }),
  field({ id: "about", subtype: "page", label: "About your project" }),
  field({ id: "site", subtype: "website", label: "Website" }),
  field({ id: "team", subtype: "number", label: "Team size" }),
  field({ id: "start", subtype: "date", label: "Start date" }),
  field({
    id: "topics",
    subtype: "multiple_choice",
    label: "Topics",
    options: options("Forms", "Payments", "Analytics"),
  }),
  field({
    id: "plan",
    subtype: "dropdown",
    label: "Plan",
    type: "select",
    options: options("Starter", "Team", "Enterprise"),
  }),
  field({ id: "feedback", subtype: "page", label: "Your feedback" }),
  field({
    id: "section",
    subtype: "heading",
    label: "Almost done",
    showDescription: true,
    description: "Two quick questions.",
  }),
  field({ id: "stars", subtype: "rating", label: "How do you rate us?", ratingCount: 5 }),
  field({
    id: "likely",
    subtype: "scale",
    label: "How likely are you to recommend us?",
    type: "radio",
    scaleMin: 0,
    scaleMax: 10,
    minLabel: "Not likely",
    maxLabel: "Very likely",
  }),
  field({ id: "message", subtype: "long_answer", label: "Anything else?" }),
];

export const SAMPLE_FORM = {
  name: "Project enquiry",
  type: "hosted",
  headerTitle: "Start a project",
  headerDescription: "Tell us about your idea: we read every answer and reply within a day.",
  submitButtonText: "Send enquiry",
  fields: SAMPLE_FIELDS,
};

/** A custom theme of good contrast: the README's second screenshot and the accessibility test's. */
export const CUSTOM_THEME = {
  backgroundColor: "#f5f3ff",
  textColor: "#1e1b4b",
  accentColor: "#6d28d9",
  buttonBackgroundColor: "#6d28d9",
  buttonTextColor: "#ffffff",
  buttonBorderStyle: "full",
  inputBorderStyle: "rounded",
  useCustomThankYouPage: true,
  tpHeader: "Thanks, we got it!",
  tpMessage: "We read every enquiry ourselves and reply within one working day.",
  tpButtonText: "Back to our site",
  tpButtonUrl: "https://example.com/",
  tpBackgroundColor: "#f5f3ff",
  tpTextColor: "#1e1b4b",
  tpButtonBackgroundColor: "#6d28d9",
  tpButtonColor: "#ffffff",
};
