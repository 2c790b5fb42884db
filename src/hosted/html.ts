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

const MARKS = new RegExp(`(${NONCE_MARK}|${TOKEN_MARK})`);

/**
 * A rendered page as bytes, cut at its marks, with its Content-Security-Policy cut at its nonce:
 * a response joins the parts around its own nonce and token, with no text to encode and no policy
 * to work out per response (encoding the page's text took a sixth of the time of serving it).
 */
export class PreparedPage {
  /** The bytes between the marks: one more than the marks. */
  readonly #parts: Buffer[];
  /** For each mark in order: whether it is the nonce's (else the token's). */
  readonly #nonceMarks: boolean[];
  readonly #partsLength: number;
  readonly #nonces: number;
  readonly #policy: string[];

  /** `policy` holds NONCE_MARK where each response's nonce goes. */
  constructor(page: string, policy: string) {
    const pieces = page.split(MARKS);
    this.#parts = pieces.filter((_, i) => i % 2 === 0).map((text) => Buffer.from(text));
    this.#nonceMarks = pieces.filter((_, i) => i % 2 === 1).map((mark) => mark === NONCE_MARK);
    this.#partsLength = this.#parts.reduce((length, part) => length + part.length, 0);
    this.#nonces = this.#nonceMarks.filter(Boolean).length;
    this.#policy = policy.split(NONCE_MARK);
  }

  /**
   * The page as sent: its nonce and token in place of the marks, written into one buffer (a map of
   * values and a Buffer.concat per response cost a fifteenth of a view).
   */
  bytes(nonce: string, token: string): Buffer {
    const nonceLength = Buffer.byteLength(nonce);
    const tokenLength = Buffer.byteLength(token);
    const tokens = this.#nonceMarks.length - this.#nonces;
    const page = Buffer.allocUnsafe(
      this.#partsLength + this.#nonces * nonceLength + tokens * tokenLength,
    );
    let at = (this.#parts[0] as Buffer).copy(page, 0);
    this.#nonceMarks.forEach((isNonce, i) => {
      at += page.write(isNonce ? nonce : token, at);
      at += (this.#parts[i + 1] as Buffer).copy(page, at);
    });
    return page;
  }

  /** The page's Content-Security-Policy with `nonce`. */
  policy(nonce: string): string {
    return this.#policy.join(nonce);
  }
}

const TOKEN_BYTES = 18;
/** Random bytes drawn at once for many tokens: one call to the system's generator per 256. */
const POOL_BYTES = TOKEN_BYTES * 256;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * A fresh unguessable value: a nonce or a page view's token. Each is 18 bytes of the system's
 * cryptographic generator, never used twice; they are drawn in batches (as Node does for
 * randomUUID), as one draw per token cost a twelfth of the time of serving a page.
 */
export function freshToken(): string {
  if (used + TOKEN_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const token = pool.toString("base64url", used, used + TOKEN_BYTES);
  used += TOKEN_BYTES;
  return token;
}
