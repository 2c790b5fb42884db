import { html, NONCE_MARK, type VNode } from "./html.ts";
import { BASE_STYLES } from "./styles.ts";

export const ICON_PATH = "/assets/icon.svg";

/** What link previews show (`seo*` members of a form; plain pages have a title only). */
export interface Preview {
  description: string;
  image: string | null;
}

export interface LayoutProps {
  title: string;
  theme: string;
  body: VNode | VNode[];
  preview?: Preview;
  /** Extra head elements (the page's scripts), each carrying the nonce. */
  head?: VNode | VNode[] | null;
  /** `page` classes: `full` for pageMode full. */
  mode?: "compact" | "full";
  /** Below the card: the service's branding link. */
  footer?: VNode | null;
  /** Error and closed pages are not worth indexing. */
  noindex?: boolean;
}

function previewTags(title: string, preview: Preview) {
  return html`
    ${preview.description && html`<meta name="description" content=${preview.description} />`}
    <meta property="og:title" content=${title} />
    ${preview.description && html`<meta property="og:description" content=${preview.description} />`}
    ${preview.image && html`<meta property="og:image" content=${preview.image} />`}
    <meta name="twitter:card" content=${preview.image ? "summary_large_image" : "summary"} />
    <meta name="twitter:title" content=${title} />
    ${preview.image && html`<meta name="twitter:image" content=${preview.image} />`}
  `;
}

/** Every page's document: one style sheet (nonce'd), the theme, and the page in a card. */
export function Layout({
  title,
  theme,
  body,
  preview,
  head,
  footer,
  mode = "compact",
  noindex,
}: LayoutProps) {
  return html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      ${noindex && html`<meta name="robots" content="noindex" />`}
      <title>${title}</title>
      <link rel="icon" href=${ICON_PATH} type="image/svg+xml" />
      ${preview && previewTags(title, preview)}
      <style nonce=${NONCE_MARK} dangerouslySetInnerHTML=${{ __html: BASE_STYLES + theme }}></style>
      ${head}
    </head>
    <body>
      <div class=${`page ${mode}`}>
        <main class="card">${body}</main>
        ${footer}
      </div>
    </body>
  </html>`;
}
