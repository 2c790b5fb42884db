import type { CaptchaCheck, CaptchaOutcome, CaptchaVerifier } from "../../src/intake/captcha.ts";
import { CAPTCHA_TOKEN_FIELDS } from "../../src/intake/captcha.ts";
import type { CountryResolver } from "../../src/intake/country.ts";

/** The country a test request names in `X-Test-Country`; unknown without it. */
export const headerCountries: CountryResolver = {
  countryOf(_ip, headers) {
    const country = headers["x-test-country"];
    return typeof country === "string" ? country.toUpperCase() : null;
  },
};

/**
 * A verifier whose answer is in the token: `pass` passes, `fail` fails, anything else cannot be
 * verified (as when the provider hangs). Keeps what it was asked, for tests to read.
 */
export class TokenCaptcha implements CaptchaVerifier {
  readonly checks: CaptchaCheck[] = [];

  async verify(check: CaptchaCheck): Promise<CaptchaOutcome> {
    this.checks.push(check);
    const token = Object.keys(CAPTCHA_TOKEN_FIELDS)
      .map((name) => check.fields[name])
      .find((value) => typeof value === "string" && value !== "");
    if (token === "pass") return "passed";
    if (token === "fail") return "failed";
    return "unverified";
  }
}
