import type { FastifyReply } from "fastify";
import type { CaptchaScriptUrls } from "./captcha-scripts.ts";
import { captchaOrigin } from "./captcha-widget.ts";
import { captchaOf } from "./form-page.ts";
import type { PreparedPage } from "./html.ts";
import { type Appearance, safeUrl } from "./theme.ts";

const originOf = (url: string | null) => (url ? new URL(url).origin : null);

/**
 * Where a page's visitor may be framed: 'self' and `https://<entry>` for each allowedDomains
 * entry (`*.x` as written); no restriction when the form names none.
 */
export function frameAncestors(allowedDomains: string): string | null {
  const entries = allowedDomains
    .split(",")
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => /^(\*\.)?[a-z0-9.-]+$/.test(entry));
  if (entries.length === 0) return null;
  return ["'self'", ...entries.map((entry) => `https://${entry}`)].join(" ");
}

/**
 * The page's Content-Security-Policy: scripts and styles only with this response's nonce (never
 * 'unsafe-inline'), nothing from another origin but the captcha provider and the form's images,
 * posts to the intake and redirects to the owner's success URL.
 */
export function pagePolicy(
  nonce: string,
  appearance: Appearance | null,
  scripts: CaptchaScriptUrls,
): string {
  const images = new Set(["'self'"]);
  const scriptSources = new Set([`'nonce-${nonce}'`]);
  const frames = new Set<string>();
  const formAction = new Set(["'self'"]);
  let ancestors: string | null = null;
  if (appearance) {
    for (const url of [appearance.headerImage, appearance.logo]) {
      const origin = originOf(safeUrl(url, ["https:"]));
      if (origin) images.add(origin);
    }
    const captcha = captchaOf(appearance);
    if (captcha && captcha !== "missing") {
      const origin = captchaOrigin(captcha, scripts);
      scriptSources.add(origin);
      frames.add(origin);
    }
    const success = originOf(
      appearance.useCustomRedirect ? safeUrl(appearance.customSuccessUrl) : null,
    );
    if (success) formAction.add(success);
    ancestors = frameAncestors(appearance.allowedDomains);
  }
  const directives = [
    "default-src 'none'",
    `script-src ${[...scriptSources].join(" ")}`,
    `style-src 'nonce-${nonce}'`,
    `img-src ${[...images].join(" ")}`,
    "connect-src 'self'",
    frames.size > 0 ? `frame-src ${[...frames].join(" ")}` : null,
    `form-action ${[...formAction].join(" ")}`,
    "base-uri 'none'",
    "object-src 'none'",
    ancestors ? `frame-ancestors ${ancestors}` : null,
  ];
  return directives.filter((d) => d !== null).join("; ");
}

/** Sends a rendered page with its nonce and token in place and the headers every page carries. */
export function sendHostedPage(
  reply: FastifyReply,
  status: number,
  page: PreparedPage,
  { nonce, token }: { nonce: string; token: string },
) {
  return reply
    .code(status)
    .header("Content-Type", "text/html; charset=utf-8")
    .header("Content-Security-Policy", page.policy(nonce))
    .header("Cache-Control", "no-store")
    .header("Referrer-Policy", "strict-origin-when-cross-origin")
    .send(page.bytes(nonce, token));
}
