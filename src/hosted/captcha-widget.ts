import type { CaptchaProvider } from "../intake/captcha.ts";
import type { CaptchaScriptUrls } from "./captcha-scripts.ts";
import { html, NONCE_MARK } from "./html.ts";

/** The element each provider's script turns into its widget. */
const WIDGET_CLASS: Record<CaptchaProvider, string> = {
  turnstile: "cf-turnstile",
  hcaptcha: "h-captcha",
  recaptcha: "g-recaptcha",
};

export interface CaptchaChoice {
  provider: CaptchaProvider;
  siteKey: string;
}

export const CaptchaScript = (choice: CaptchaChoice, urls: CaptchaScriptUrls) =>
  html`<script src=${urls[choice.provider]} nonce=${NONCE_MARK} async defer></script>`;

export const CaptchaWidget = (choice: CaptchaChoice) =>
  html`<div class=${`captcha ${WIDGET_CLASS[choice.provider]}`} data-sitekey=${choice.siteKey}></div>`;

/** The origin the provider's script and frames come from, for the page's policy. */
export const captchaOrigin = (choice: CaptchaChoice, urls: CaptchaScriptUrls) =>
  new URL(urls[choice.provider]).origin;
