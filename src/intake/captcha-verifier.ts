import { request } from "undici";
import {
  CAPTCHA_TOKEN_FIELDS,
  type CaptchaCheck,
  type CaptchaOutcome,
  type CaptchaProvider,
  type CaptchaVerifier,
} from "./captcha.ts";

export interface CaptchaSettings {
  /** Each provider's siteverify URL: configuration, so that tests talk to a local provider. */
  verifyUrls: Readonly<Record<CaptchaProvider, string>>;
  /** reCAPTCHA v3 answers with a score from 0 to 1; below this the respondent is taken for a bot. */
  minScore: number;
  /**
   * How long a provider may take before the submission is kept as unverified spam. Below the 5 s
   * the intake promises for its whole answer.
   */
  timeoutMs: number;
}

export const DEFAULT_VERIFY_URLS: Readonly<Record<CaptchaProvider, string>> = {
  turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
  hcaptcha: "https://api.hcaptcha.com/siteverify",
  recaptcha: "https://www.google.com/recaptcha/api/siteverify",
};

export const DEFAULT_CAPTCHA_TIMEOUT_MS = 4_500;

/** Longer than any provider's token (theirs are at most a few kB): refused without asking. */
const MAX_TOKEN_LENGTH = 8_192;
/** A siteverify answer is a few hundred bytes; a larger one is not a provider's. */
const MAX_ANSWER_BYTES = 65_536;

interface SiteverifyAnswer {
  success?: unknown;
  score?: unknown;
}

/** The provider whose token field was sent, and the token; the first in a fixed order when several. */
function tokenOf(
  fields: CaptchaCheck["fields"],
): { provider: CaptchaProvider; token: unknown } | null {
  for (const [field, provider] of Object.entries(CAPTCHA_TOKEN_FIELDS)) {
    if (Object.hasOwn(fields, field)) return { provider, token: fields[field] };
  }
  return null;
}

async function readAnswer(body: AsyncIterable<Buffer>): Promise<SiteverifyAnswer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) return null;
    chunks.push(chunk);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    return typeof parsed === "object" && parsed !== null ? (parsed as SiteverifyAnswer) : null;
  } catch {
    return null;
  }
}

/**
 * Verifies tokens with Cloudflare Turnstile, hCaptcha or Google reCAPTCHA. A missing, empty or
 * oversized token, or one the provider rejects, is `failed`; a provider that does not answer in
 * time, answers anything but a 2xx, or answers something that is not its JSON is `unverified`:
 * the respondent may be real, so the submission is kept (as spam) rather than lost.
 */
export function createCaptchaVerifier(settings: CaptchaSettings): CaptchaVerifier {
  return {
    async verify({ fields, secret, remoteIp }): Promise<CaptchaOutcome> {
      const sent = tokenOf(fields);
      if (!sent || typeof sent.token !== "string") return "failed";
      const { provider, token } = sent;
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return "failed";
      let answer: SiteverifyAnswer | null;
      try {
        const response = await request(settings.verifyUrls[provider], {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ secret, response: token, remoteip: remoteIp }).toString(),
          signal: AbortSignal.timeout(settings.timeoutMs),
          headersTimeout: settings.timeoutMs,
          bodyTimeout: settings.timeoutMs,
        });
        if (response.statusCode < 200 || response.statusCode > 299) {
          await response.body.dump();
          return "unverified";
        }
        answer = await readAnswer(response.body);
      } catch {
        return "unverified";
      }
      if (answer === null || typeof answer.success !== "boolean") return "unverified";
      if (!answer.success) return "failed";
      if (provider === "recaptcha" && typeof answer.score === "number") {
        return answer.score < settings.minScore ? "failed" : "passed";
      }
      return "passed";
    },
  };
}
