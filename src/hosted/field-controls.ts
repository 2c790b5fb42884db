import type { Static } from "typebox";
import { describeProblem } from "../fields/answer-rules.ts";
import type { FormField } from "../forms/form-field.schema.ts";
import { html, type VNode } from "./html.ts";

export type Field = Static<typeof FormField>;

/** What a refused post brought back: answers as typed, and each field's message. */
export interface PageState {
  values: ReadonlyMap<string, readonly string[]>;
  errors: ReadonlyMap<string, string>;
}

export const EMPTY_STATE: PageState = { values: new Map(), errors: new Map() };

const INPUT_TYPES: Record<string, string> = {
  text: "text",
  email: "email",
  tel: "tel",
  number: "number",
  url: "url",
  date: "date",
  file: "file",
};
const AUTOCOMPLETE: Record<string, string> = { email: "email", phone: "tel", website: "url" };

const describeError = (state: PageState, id: string) => {
  const reason = state.errors.get(id);
  return reason === undefined ? "" : describeProblem(reason);
};

const first = (state: PageState, id: string) => state.values.get(id)?.[0] ?? "";

/** The ids of the field's hint and error, for aria-describedby; the error only when there is one. */
function describedBy(field: Field, state: PageState) {
  const ids = [];
  if (field.showDescription && field.description) ids.push(`${field.id}-hint`);
  if (state.errors.has(field.id)) ids.push(`${field.id}-error`);
  return ids.length > 0 ? ids.join(" ") : undefined;
}

const Hint = ({ field }: { field: Field }) =>
  field.showDescription && field.description
    ? html`<p class="hint" id=${`${field.id}-hint`}>${field.description}</p>`
    : null;

/** Always in the page, empty while valid: the script fills it, and a screen reader hears it. */
const ErrorText = ({ field, state }: { field: Field; state: PageState }) =>
  html`<p class="error" id=${`${field.id}-error`} aria-live="polite">${describeError(state, field.id)}</p>`;

const Required = ({ field }: { field: Field }) =>
  field.required ? html`<span class="req" aria-hidden="true">*</span>` : null;

/** Attributes every control of a field shares: validity and what describes it. */
const aria = (field: Field, state: PageState) => ({
  "aria-invalid": state.errors.has(field.id) ? "true" : undefined,
  "aria-describedby": describedBy(field, state),
});

/** One labelled control: a text-like input, a textarea or a select. */
function SingleControl(field: Field, state: PageState) {
  const common = { id: field.id, name: field.id, required: field.required, ...aria(field, state) };
  let control: VNode;
  if (field.type === "textarea") {
    control = html`<textarea ...${common} maxlength="10000">${first(state, field.id)}</textarea>`;
  } else if (field.type === "select") {
    const chosen = first(state, field.id);
    control = html`<select ...${common}>
      <option value="">Choose…</option>
      ${field.options.map((o) => html`<option value=${o.value} selected=${o.value === chosen}>${o.value}</option>`)}
    </select>`;
  } else {
    const type = INPUT_TYPES[field.type] ?? "text";
    const value = type === "file" ? undefined : first(state, field.id);
    control = html`<input ...${common} type=${type} value=${value}
      autocomplete=${AUTOCOMPLETE[field.subtype]} inputmode=${field.subtype === "phone" ? "tel" : undefined}
      maxlength=${field.subtype === "short_answer" ? "1000" : undefined}
      step=${type === "number" ? "any" : undefined} />`;
  }
  return html`<div class="field" data-field=${field.id}>
    <label class="label" for=${field.id}>${field.label}<${Required} field=${field} /></label>
    <${Hint} field=${field} />
    ${control}
    <${ErrorText} field=${field} state=${state} />
  </div>`;
}

interface Choice {
  value: string;
  label: string;
}

/** Choices of a group: options, rating's 1..ratingCount, or a scale's min..max. */
function choicesOf(field: Field): Choice[] {
  if (field.type === "rating" || field.subtype === "rating") {
    return Array.from({ length: field.ratingCount }, (_, i) => ({
      value: String(i + 1),
      label: String(i + 1),
    }));
  }
  if (field.subtype === "scale") {
    const count = Math.max(0, field.scaleMax - field.scaleMin + 1);
    return Array.from({ length: count }, (_, i) => ({
      value: String(field.scaleMin + i),
      label: String(field.scaleMin + i),
    }));
  }
  return field.options.map((o) => ({ value: o.value, label: o.value }));
}

/** A group of choices in a fieldset whose legend is the label. */
function GroupControl(field: Field, state: PageState) {
  const chosen = state.values.get(field.id) ?? [];
  const inputType = field.type === "checkbox" ? "checkbox" : "radio";
  const numeric = field.type === "rating" || field.subtype === "scale";
  const choices = choicesOf(field);
  const first = aria(field, state);
  const ends =
    field.subtype === "scale" && (field.minLabel || field.maxLabel)
      ? html`<div class="ends" aria-hidden="true"><span>${field.minLabel}</span><span>${field.maxLabel}</span></div>`
      : null;
  const labelFor = (choice: Choice) => {
    if (field.type === "rating") return `${choice.label} of ${field.ratingCount}`;
    if (field.subtype !== "scale") return undefined;
    if (choice.value === String(field.scaleMin) && field.minLabel)
      return `${choice.label}, ${field.minLabel}`;
    if (choice.value === String(field.scaleMax) && field.maxLabel)
      return `${choice.label}, ${field.maxLabel}`;
    return undefined;
  };
  return html`<fieldset class="field" data-field=${field.id} aria-describedby=${first["aria-describedby"]}>
    <legend class="label">${field.label}<${Required} field=${field} /></legend>
    <${Hint} field=${field} />
    <div class=${numeric ? "scale" : "choices"}>
      ${choices.map(
        (choice, i) => html`<label class="choice">
          <input type=${inputType} name=${field.id} value=${choice.value}
            id=${i === 0 ? field.id : undefined} checked=${chosen.includes(choice.value)}
            required=${inputType === "radio" && field.required}
            aria-label=${labelFor(choice)} aria-invalid=${first["aria-invalid"]}
            aria-describedby=${i === 0 ? first["aria-describedby"] : undefined} />
          <span>${choice.label}</span>
        </label>`,
      )}
    </div>
    ${ends}
    <${ErrorText} field=${field} state=${state} />
  </fieldset>`;
}

/** A scale rendered as its `range` control: min..max with the end labels beside it. */
function RangeControl(field: Field, state: PageState) {
  const value = first(state, field.id) || String(field.scaleMin);
  return html`<fieldset class="field" data-field=${field.id}>
    <legend class="label">${field.label}<${Required} field=${field} /></legend>
    <${Hint} field=${field} />
    <input type="range" id=${field.id} name=${field.id} min=${field.scaleMin} max=${field.scaleMax}
      step="1" value=${value} aria-label=${field.label} ...${aria(field, state)} />
    <div class="ends"><span>${field.scaleMin} ${field.minLabel}</span><span>${field.scaleMax} ${field.maxLabel}</span></div>
    <${ErrorText} field=${field} state=${state} />
  </fieldset>`;
}

const GROUPS = new Set(["radio", "checkbox", "rating"]);

/** The field as its `type` says; headings are text; page breaks are handled by the steps. */
export function FieldControl(field: Field, state: PageState) {
  if (field.type === "heading" || field.subtype === "heading") {
    return html`<div class="field heading" data-field=${field.id}>
      <h2>${field.label}</h2>
      <${Hint} field=${field} />
    </div>`;
  }
  if (field.type === "range") return RangeControl(field, state);
  if (GROUPS.has(field.type)) return GroupControl(field, state);
  return SingleControl(field, state);
}
