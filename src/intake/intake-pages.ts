import type { FastifyReply } from "fastify";
import type { FormSettings } from "../forms/form-defaults.ts";
import { isAbsoluteUrl, isColor } from "../http/formats.ts";

/**
 * The small pages the intake answers browsers with. Every value a form owner wrote is text, never
 * markup: it is escaped wherever it goes, and the page's policy allows no script at all.
 */
const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** No script, no plugin, no form, no frame; styles inline only; images only over https. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface PageColors {
  background: string;
  text: string;
}

const DEFAULT_COLORS: PageColors = { background: "#ffffff", text: "#030712" };

/** A color as stored was checked on write; anything else falls back, never reaches the style. */
const color = (value: string | undefined, fallback: string) =>
  value !== undefined && isColor(value) ? value : fallback;

function page(title: string, body: string, colors: PageColors = DEFAULT_COLORS): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;font-family:system-ui,sans-serif;background:${colors.background};color:${colors.text}}
main{max-width:36rem;padding:2rem;text-align:center}
h1{font-size:1.75rem;margin:0 0 1rem}
p{line-height:1.5;white-space:pre-line;overflow-wrap:anywhere}
a.button{display:inline-block;margin-top:1rem;padding:.6rem 1.2rem;border-radius:.5rem;text-decoration:none}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** Sends `html` with the page headers. */
export function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply
    .code(status)
    .header("Content-Type", "text/html; charset=utf-8")
    .header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    .header("X-Content-Type-Options", "nosniff")
    .header("Referrer-Policy", "no-referrer")
    .send(html);
}

export function defaultThanksPage(): string {
  return page("Thank you", "<h1>Thank you!</h1>\n<p>Your submission has been received.</p>");
}

/** The thank-you page the owner wrote (`tp*` members); its button is a link, and only to http(s). */
export function customThanksPage(settings: Partial<FormSettings>): string {
  const header = settings.tpHeader || "Thank you!";
  const parts = [`<h1>${escapeHtml(header)}</h1>`];
  if (settings.tpMessage) parts.push(`<p>${escapeHtml(settings.tpMessage)}</p>`);
  const url = settings.tpButtonUrl ?? "";
  if (settings.tpButtonText && isAbsoluteUrl(url, ["http:", "https:"])) {
    const style = `background:${color(settings.tpButtonBackgroundColor, "#f3f4f6")};color:${color(settings.tpButtonColor, "#030712")}`;
    parts.push(
      `<a class="button" href="${escapeHtml(url)}" rel="noopener noreferrer" style="${style}">${escapeHtml(settings.tpButtonText)}</a>`,
    );
  }
  return page(header, parts.join("\n"), {
    background: color(settings.tpBackgroundColor, DEFAULT_COLORS.background),
    text: color(settings.tpTextColor, DEFAULT_COLORS.text),
  });
}

/** An error page: a title and a human message, both plain text. */
export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
