import type { CaptchaProvider } from "../intake/captcha.ts";

/** Where each provider's widget script comes from (configuration, like the verify URLs). */
export type CaptchaScriptUrls = Readonly<Record<CaptchaProvider, string>>;

export const DEFAULT_CAPTCHA_SCRIPT_URLS: CaptchaScriptUrls = {
  turnstile: "https://challenges.cloudflare.com/turnstile/v0/api.js",
  hcaptcha: "https://js.hcaptcha.com/1/api.js",
  recaptcha: "https://www.google.com/recaptcha/api.js",
};
