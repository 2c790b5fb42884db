import type { CaptchaScriptUrls } from "./captcha-scripts.ts";
import { type CaptchaChoice, CaptchaScript, CaptchaWidget } from "./captcha-widget.ts";
import { EMPTY_STATE, type Field, FieldControl, type PageState } from "./field-controls.ts";
import { html, NONCE_MARK, renderDocument, TOKEN_MARK } from "./html.ts";
import { Layout } from "./layout.ts";
import { Branding } from "./message-pages.ts";
import { type Appearance, formTheme, safeUrl } from "./theme.ts";

/** What a form page is made of: the form's public members only (no owner-only setting). */
export interface HostedForm {
  id: string;
  name: string;
  appearance: Appearance;
  /** Where the script sends the browser after a success (the thank-you page or the redirect). */
  next: string;
}

export const FORM_SCRIPT_PATH = "/assets/form.js";

/** The bot check the page shows: on, and with the provider and site key the owner gave (or null). */
export function captchaOf(appearance: Appearance): CaptchaChoice | null | "missing" {
  if (!appearance.providerCaptchaEnabled) return null;
  const { captchaProvider: provider, captchaSiteKey: siteKey } = appearance;
  return siteKey === "" ? "missing" : { provider, siteKey };
}

/** The fields split at `page` breaks: each step opens with its page field (the first may not). */
export function stepsOf(fields: readonly Field[]): { page: Field | null; fields: Field[] }[] {
  const steps: { page: Field | null; fields: Field[] }[] = [{ page: null, fields: [] }];
  for (const field of fields) {
    if (field.subtype === "page" || field.type === "page") steps.push({ page: field, fields: [] });
    else steps.at(-1)?.fields.push(field);
  }
  return steps[0]?.fields.length === 0 && steps.length > 1 ? steps.slice(1) : steps;
}

/** What the script needs of the fields: kinds, requirement, choices and the logic (no texts). */
function clientData(form: HostedForm): string {
  const fields = form.appearance.fields.map((f) => ({
    id: f.id,
    type: f.type,
    subtype: f.subtype,
    required: f.required,
    options: f.options,
    ratingCount: f.ratingCount,
    scaleMin: f.scaleMin,
    scaleMax: f.scaleMax,
    logic: f.logic,
  }));
  const data = { id: form.id, saveAnswers: form.appearance.saveAnswers, next: form.next, fields };
  // Inside a script element: no "</script>" or "<!--" may close or comment it.
  return JSON.stringify(data).replace(/</g, "\\u003c");
}

function Header({ form }: { form: HostedForm }) {
  const a = form.appearance;
  const cover = safeUrl(a.headerImage, ["https:"]);
  const logo = safeUrl(a.logo, ["https:"]);
  const title = a.headerTitle || form.name;
  return html`
    ${cover && html`<img class="cover" src=${cover} alt="" />`}
    <header>
      ${logo && html`<img class="logo" src=${logo} alt=${`${form.name} logo`} />`}
      <h1>${title}</h1>
      ${a.headerDescription && html`<p class="lead">${a.headerDescription}</p>`}
    </header>`;
}

function Submit({ form, captcha }: { form: HostedForm; captcha: ReturnType<typeof captchaOf> }) {
  if (captcha === "missing") {
    return html`<p class="notice" role="status">This form cannot take answers yet: its bot check is not set up.</p>`;
  }
  return html`<button type="submit" class="button submit">${form.appearance.submitButtonText || "Submit"}</button>`;
}

function FormBody({
  form,
  state,
  captcha,
}: {
  form: HostedForm;
  state: PageState;
  captcha: ReturnType<typeof captchaOf>;
}) {
  const a = form.appearance;
  const steps = stepsOf(a.fields);
  const multipart = a.fields.some((f) => f.type === "file" || f.subtype === "file_upload");
  const honeypot = a.customHoneypot || "_gotcha";
  const errorCount = state.errors.size;
  return html`<form method="post" action=${`/f/${form.id}`} class="fields"
      enctype=${multipart ? "multipart/form-data" : undefined} novalidate=${false} data-form>
    ${errorCount > 0 && html`<p class="summary" role="alert" id="summary">${errorCount === 1 ? "One answer needs" : `${errorCount} answers need`} your attention.</p>`}
    <input type="hidden" name="_token" value=${TOKEN_MARK} />
    <p class="stepper" hidden data-stepper aria-live="polite"></p>
    <div class="trap" aria-hidden="true">
      <label>Leave this empty <input type="text" name=${honeypot} tabindex="-1" autocomplete="off" /></label>
    </div>
    ${steps.map(
      (
        step,
        i,
      ) => html`<section class="step" data-step=${i} aria-labelledby=${step.page ? `${step.page.id}-title` : undefined}>
        ${step.page && html`<div class="field heading" data-field=${step.page.id}><h2 id=${`${step.page.id}-title`}>${step.page.label}</h2>${step.page.showDescription && step.page.description && html`<p class="hint">${step.page.description}</p>`}</div>`}
        ${step.fields.map((field) => FieldControl(field, state))}
      </section>`,
    )}
    ${captcha && captcha !== "missing" && CaptchaWidget(captcha)}
    <progress hidden max="100" value="0" aria-label="Upload progress" data-progress></progress>
    <div class="actions">
      <button type="button" class="button secondary" hidden data-back>Back</button>
      <button type="button" class="button" hidden data-next>Next</button>
      <${Submit} form=${form} captcha=${captcha} />
    </div>
  </form>`;
}

/** The form page; with `state`, the form again after a refused post (answers and messages). */
export function formPage(
  form: HostedForm,
  scripts: CaptchaScriptUrls,
  state: PageState = EMPTY_STATE,
): string {
  const a = form.appearance;
  const captcha = captchaOf(a);
  const title = a.seoTitle || form.name;
  return renderDocument(
    Layout({
      title,
      theme: formTheme(a),
      mode: a.pageMode === "full" ? "full" : "compact",
      preview: { description: a.seoDescription, image: safeUrl(a.seoImage, ["https:"]) },
      head: html`
        <script type="application/json" id="form-data" dangerouslySetInnerHTML=${{ __html: clientData(form) }}></script>
        <script type="module" src=${FORM_SCRIPT_PATH} nonce=${NONCE_MARK}></script>
        ${captcha && captcha !== "missing" && CaptchaScript(captcha, scripts)}`,
      body: html`<div class="inner"><${Header} form=${form} /><${FormBody} form=${form} state=${state} captcha=${captcha} /></div>`,
      footer: Branding({ removed: a.removeServiceBranding }),
    }),
  );
}
