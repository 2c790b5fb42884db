import { html, renderDocument, type VNode } from "./html.ts";
import { Layout } from "./layout.ts";
import { type Appearance, DEFAULT_THEME, formTheme, safeUrl, thanksTheme } from "./theme.ts";

/** The service's small link under a page, unless the owner removed the branding. */
export const Branding = ({ removed }: { removed: boolean }) =>
  removed
    ? null
    : html`<footer class="brand"><a href="/" rel="noopener">Made with formdeck</a></footer>`;

/** The icons of the message pages, drawn inline: no font or file is needed to show them. */
const MARKS = {
  done: "M7 12.5l3.2 3.2L17 9",
  closed: "M9.5 8v8M14.5 8v8",
  problem: "M12 7v6.5M12 16.5v.5",
} as const;

const Mark = ({ kind }: { kind: keyof typeof MARKS }) =>
  html`<div class="mark" aria-hidden="true">
    <svg viewBox="0 0 24 24" width="28" height="28" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"><path d=${MARKS[kind]} /></svg>
  </div>`;

interface MessageProps {
  title: string;
  message: string;
  mark: keyof typeof MARKS;
  extra?: VNode | null;
}

const Message = ({ title, message, mark, extra }: MessageProps) =>
  html`<div class="message">
    <${Mark} kind=${mark} />
    <h1>${title}</h1>
    ${message && html`<p>${message}</p>`}
    ${extra}
  </div>`;

/** The thank-you page: the owner's (`tp*`) when `useCustomThankYouPage`, else a plain one. */
export function thanksPage(appearance: Appearance): string {
  if (!appearance.useCustomThankYouPage) {
    return plainPage("Thank you!", "Your answers have been sent.", "done", appearance);
  }
  const title = appearance.tpHeader || "Thank you!";
  const url = safeUrl(appearance.tpButtonUrl);
  const button =
    url && appearance.tpButtonText
      ? html`<a class="button" href=${url} rel="noopener noreferrer">${appearance.tpButtonText}</a>`
      : null;
  return renderDocument(
    Layout({
      title,
      theme: thanksTheme(appearance),
      body: Message({ title, message: appearance.tpMessage, mark: "done", extra: button }),
      footer: Branding({ removed: appearance.removeServiceBranding }),
      noindex: true,
    }),
  );
}

/** The closed page: the owner's message when `showCustomClosedMessage`, never a field. */
export function closedPage(appearance: Appearance, reason = ""): string {
  const custom = appearance.showCustomClosedMessage;
  const title = (custom && appearance.closeMessageTitle) || "This form is closed";
  const message = custom ? appearance.closeMessageDescription : reason;
  return plainPage(title, message || "It no longer accepts answers.", "closed", appearance);
}

export function plainPage(
  title: string,
  message: string,
  mark: keyof typeof MARKS,
  appearance: Appearance,
) {
  return renderDocument(
    Layout({
      title,
      theme: formTheme(appearance),
      body: Message({ title, message, mark }),
      footer: Branding({ removed: appearance.removeServiceBranding }),
      noindex: true,
    }),
  );
}

/** A page for a missing form, or an error before any form is known: the default look. */
export function errorPage(title: string, message: string): string {
  return renderDocument(
    Layout({
      title,
      theme: DEFAULT_THEME,
      body: Message({ title, message, mark: "problem" }),
      footer: Branding({ removed: false }),
      noindex: true,
    }),
  );
}

export const notFoundPage = () =>
  errorPage(
    "Form not found",
    "This link does not lead to a form. Check the address you were given.",
  );
