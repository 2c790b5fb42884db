import type sanitizeHtml from "sanitize-html";
import type { Answer } from "../../submissions/answer.ts";
import { valueText } from "./censor.ts";
import { escapeHtml, htmlToText } from "./html-text.ts";

/**
 * What an autoresponse's HTML may hold (docs/decisions.md lists it): text formatting, lists,
 * headings and links to http(s) and mailto addresses. No script, style, image, form or frame,
 * no attribute but a link's href and title.
 */
const ALLOWLIST: sanitizeHtml.IOptions = {
  allowedTags: [
    "p",
    "br",
    "b",
    "strong",
    "i",
    "em",
    "u",
    "s",
    "small",
    "sub",
    "sup",
    "a",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "hr",
    "span",
    "div",
    "code",
    "pre",
  ],
  allowedAttributes: { a: ["href", "title"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
};

let sanitizer: Promise<typeof sanitizeHtml> | null = null;

/**
 * The HTML sanitizer, loaded with the first autoresponse: it brings an HTML and a CSS parser, which
 * an instance whose forms send none does not hold.
 */
function htmlSanitizer(): Promise<typeof sanitizeHtml> {
  sanitizer ??= import("sanitize-html").then((module) => module.default);
  return sanitizer;
}

/** `{{fieldId}}`, spaces inside the braces allowed. */
const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** The answer to `fieldId` as text: arrays joined with `, `; no answer, empty. */
function answerText(answers: readonly Answer[], fieldId: string): string {
  const answer = answers.find((candidate) => candidate.id === fieldId);
  if (!answer) return "";
  return Array.isArray(answer.value)
    ? answer.value.map(valueText).join(", ")
    : valueText(answer.value);
}

/**
 * The autoresponse's bodies (notifications.md §2): the form's HTML with every `{{fieldId}}`
 * replaced by that answer, escaped, then sanitized by the allowlist; the text part derived from
 * the result. Answers are put in before sanitizing, so that no answer can bring markup past it.
 */
export async function autoresponseBodies(
  template: string,
  answers: readonly Answer[],
): Promise<{ html: string; text: string }> {
  const filled = template.replace(PLACEHOLDER, (_, fieldId: string) =>
    escapeHtml(answerText(answers, fieldId)),
  );
  const html = (await htmlSanitizer())(filled, ALLOWLIST);
  return { html, text: htmlToText(html) };
}
