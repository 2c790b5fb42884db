/**
 * The third-party bot check (intake check 7). The token field present in the answers names the
 * provider; the form's secret goes to that provider's siteverify URL with the token.
 */
export type CaptchaProvider = "turnstile" | "hcaptcha" | "recaptcha";

/** `unverified`: the provider did not answer in time or failed, so the submission is kept as spam. */
export type CaptchaOutcome = "passed" | "failed" | "unverified";

/** The answer fields that carry a token, by provider; none of them is stored as an answer. */
export const CAPTCHA_TOKEN_FIELDS: Readonly<Record<string, CaptchaProvider>> = {
  "cf-turnstile-response": "turnstile",
  "h-captcha-response": "hcaptcha",
  "g-recaptcha-response": "recaptcha",
};

export interface CaptchaCheck {
  /** The submitted fields, captcha token fields included, as parsed from the body. */
  fields: Readonly<Record<string, unknown>>;
  /** The form's `providerCaptchaSecretKey`. */
  secret: string;
  remoteIp: string;
}

export interface CaptchaVerifier {
  /** Never throws and settles within the provider timeout: a failure to verify is `unverified`. */
  verify(check: CaptchaCheck): Promise<CaptchaOutcome>;
}
