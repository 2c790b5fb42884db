import { randomBytes } from "node:crypto";

/** A rendered template, opaque here: only `renderDocument` reads it. */
export type VNode = { readonly type: unknown; readonly props: unknown };

// Loaded without their type declarations: preact's pull the DOM library into every file of the
// project (fetch would then refuse a Buffer body), and these two calls are all we use.
const HTM_PREACT: string = "htm/preact";
const RENDER_TO_STRING: string = "preact-render-to-string";
const { html: bound } = (await import(HTM_PREACT)) as {
  html: (strings: TemplateStringsArray, ...values: unknown[]) => VNode;
};
const { render } = (await import(RENDER_TO_STRING)) as { render: (root: VNode) => string };

/**
 * Templates are htm tagged templates rendered by preact-render-to-string: every interpolated
 * value is text or an attribute value and is escaped; markup comes only from the templates.
 */
export const html = bound as (strings: TemplateStringsArray, ...values: unknown[]) => VNode;

/**
 * Stand-ins for what changes per response (the CSP nonce, the page view's token). A page is
 * rendered once per form version with these in place; each response swaps in its own values. They
 * are random per process, so no text an owner writes can forge one.
 */
export const NONCE_MARK = `n${randomBytes(12).toString("hex")}`;
export const TOKEN_MARK = `t${randomBytes(12).toString("hex")}`;

export function renderDocument(root: VNode): string {
  return `<!doctype html>\n${render(root)}`;
}

/** The page as sent: its nonce and token in place of the marks. */
export function personalize(page: string, nonce: string, token: string): string {
  return page.replaceAll(NONCE_MARK, nonce).replaceAll(TOKEN_MARK, token);
}

/** A fresh unguessable value: a nonce or a page view's token. */
export const freshToken = () => randomBytes(18).toString("base64url");
