import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import { NO_SNIFF } from "../http/security-headers.ts";
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

/** The headers every page carries, with its policy for `nonce`: Fastify's and the raw answer's. */
function pageHeaders(page: PreparedPage, nonce: string) {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": page.policy(nonce),
    "cache-control": "no-store",
    "referrer-policy": "strict-origin-when-cross-origin",
  };
}

/** What makes one view of a page: its nonce and, for a form page, its `_token`. */
export interface ViewTokens {
  nonce: string;
  token: string;
}

/** Sends a rendered page with its nonce and token in place and the headers every page carries. */
export function sendHostedPage(
  reply: FastifyReply,
  status: number,
  page: PreparedPage,
  { nonce, token }: ViewTokens,
) {
  return reply.code(status).headers(pageHeaders(page, nonce)).send(page.bytes(nonce, token));
}

/**
 * Writes a page to the HTTP server's response as sendHostedPage and the application's onSend
 * hooks would (`X-Content-Type-Options`, `X-Request-Id`): for a view answered before routing.
 */
export function writeHostedPage(
  response: ServerResponse,
  status: number,
  page: PreparedPage,
  { nonce, token }: ViewTokens,
  requestId: string,
) {
  const body = page.bytes(nonce, token);
  response.writeHead(status, {
    ...pageHeaders(page, nonce),
    [NO_SNIFF[0].toLowerCase()]: NO_SNIFF[1],
    "x-request-id": requestId,
    "content-length": body.length,
  });
  response.end(body);
}
