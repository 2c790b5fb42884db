import type { CaptchaCheck, CaptchaOutcome, CaptchaVerifier } from "../../src/intake/captcha.ts";
import { CAPTCHA_TOKEN_FIELDS } from "../../src/intake/captcha.ts";
import type { CountryResolver } from "../../src/intake/country.ts";
import type { JobQueue } from "../../src/jobs/queue.ts";
import { createSubmissionEvents } from "../../src/notifications/submission-events.ts";

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

/**
 * A job queue for tests that start none: emails are skipped without an SMTP server, so nothing
 * reaches it; a test that enqueues starts a real queue and passes its events to buildTestApp.
 */
export const noQueue: JobQueue = {
  enqueue: () => Promise.reject(new Error("this test started no job queue")),
  enqueueAll: () => Promise.reject(new Error("this test started no job queue")),
  work: () => Promise.reject(new Error("this test started no job queue")),
  workInBatches: () => Promise.reject(new Error("this test started no job queue")),
  stop: async () => {},
};

/** The intake's events without an SMTP server or a job queue: emails are recorded skipped. */
export const eventsWithoutQueue = (config: { mailFrom: string }) =>
  createSubmissionEvents(noQueue, { smtpConfigured: false, mailFrom: config.mailFrom });
