import path from "node:path";
import { DEFAULT_CAPTCHA_SCRIPT_URLS } from "./hosted/captcha-scripts.ts";
import { proxyRanges, type TrustProxy } from "./http/client-address.ts";
import type { CaptchaProvider } from "./intake/captcha.ts";
import { DEFAULT_VERIFY_URLS } from "./intake/captcha-verifier.ts";
import { DEFAULT_RETRY_DELAYS_SECONDS } from "./jobs/retry-schedule.ts";

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Where the embedded store keeps its files; `null` keeps it in memory (tests). */
  readonly dataDir: string | null;
  readonly databaseUrl: string | null;
  readonly redisUrl: string | null;
  readonly rateLimitMax: number;
  readonly rateLimitWindowSeconds: number;
  /** Quota per client address for requests without a valid key. */
  readonly rateLimitUnauthenticatedMax: number;
  readonly bodyLimitBytes: number;
  readonly requestTimeoutSeconds: number;
  readonly autoCloseSweepSeconds: number;
  /** How often expired submissions are deleted. */
  readonly retentionSweepSeconds: number;
  readonly logLevel: string;
  /** Which peers are reverse proxies whose X-Forwarded-For names the client (see TrustProxy). */
  readonly trustProxy: TrustProxy;
  /** The header a trusted proxy writes the client's country into, lower-cased; null: none. */
  readonly countryHeader: string | null;
  readonly captchaVerifyUrls: Readonly<Record<CaptchaProvider, string>>;
  readonly captchaMinScore: number;
  /** Where hosted pages load each provider's widget script from. */
  readonly captchaScriptUrls: Readonly<Record<CaptchaProvider, string>>;
  /** Largest submission body without files. */
  readonly submissionBodyLimitBytes: number;
  /** Submissions per client address and form per intake window. */
  readonly intakeRateLimitMax: number;
  readonly intakeRateLimitWindowSeconds: number;
  /** How often counts kept in slots are folded into forms.submissions. */
  readonly submissionCountFoldSeconds: number;
  /** Webhooks may reach loopback, private and other non-public addresses (tests, own network). */
  readonly webhookAllowPrivateNetworks: boolean;
  /** The SMTP server emails go through (`smtp://` or `smtps://`); null: emails are skipped. */
  readonly smtpUrl: string | null;
  /** The sender of every email: an address, optionally with a display name. */
  readonly mailFrom: string;
  /** Waits between delivery attempts of emails and webhooks, in seconds. */
  readonly deliveryRetryDelaysSeconds: readonly number[];
  /** Files one submission may carry, the largest one, and all of them together. */
  readonly uploadMaxFiles: number;
  readonly uploadMaxFileBytes: number;
  readonly uploadMaxTotalBytes: number;
  /** Bytes of uploaded files held in memory across all requests at once; past it, 503. */
  readonly uploadMaxInFlightBytes: number;
  /** Bytes a second that uploads are read at while other requests are in flight; 0: unpaced. */
  readonly uploadRateWhileBusy: number;
  /** The service's absolute base URL, without a trailing slash: signed file links start with it. */
  readonly publicUrl: string;
}

export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number) {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name}: must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/**
 * TRUST_PROXY: `false` (the default), a hop count, or a comma-separated list of proxy addresses,
 * CIDR ranges and the names loopback, linklocal, uniquelocal. `true`, documented before hop counts
 * existed, means one hop: the entry the nearest proxy wrote, never one the client wrote.
 */
function trustProxy(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = env.TRUST_PROXY?.trim() ?? "";
  if (raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true") return 1;
  if (/^[0-9]+$/.test(raw)) {
    if (Number(raw) > 100) {
      throw new ConfigError(`TRUST_PROXY: a hop count must be at most 100, got "${raw}"`);
    }
    return Number(raw);
  }
  const entries = raw.split(",").map((entry) => entry.trim());
  const wrong = entries.find((entry) => proxyRanges(entry) === null);
  if (wrong !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY: must be false, a hop count or a comma-separated list of proxy addresses and CIDR ranges; "${wrong}" is none of these`,
    );
  }
  return Object.freeze(entries);
}

function text(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name]?.trim();
  return raw ? raw : null;
}

function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) {
    throw new ConfigError(`${name}: must be an http:// or https:// URL, got "${raw}"`);
  }
  return raw;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = text(env, name);
  if (raw === null || raw === "false") return false;
  if (raw === "true") return true;
  throw new ConfigError(`${name}: must be true or false, got "${raw}"`);
}

function fraction(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^(0(\.[0-9]+)?|1(\.0+)?)$/.test(raw)) {
    throw new ConfigError(`${name}: must be a number from 0 to 1, got "${raw}"`);
  }
  return Number(raw);
}

function headerName(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = text(env, name);
  if (raw !== null && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(raw)) {
    throw new ConfigError(`${name}: must be an HTTP header name, got "${raw}"`);
  }
  return raw?.toLowerCase() ?? null;
}

/**
 * A country header is believed only from a trusted proxy: without one, any client could write
 * it and pass a form's country rule.
 */
function countryHeader(env: NodeJS.ProcessEnv): string | null {
  const header = headerName(env, "COUNTRY_HEADER");
  if (header !== null && trustProxy(env) === false) {
    throw new ConfigError(
      "COUNTRY_HEADER: needs TRUST_PROXY, since only a trusted proxy's header can be believed",
    );
  }
  return header;
}

function smtpUrl(env: NodeJS.ProcessEnv): string | null {
  const raw = text(env, "SMTP_URL");
  if (raw !== null && (!URL.canParse(raw) || !/^smtps?:$/.test(new URL(raw).protocol))) {
    // The URL holds credentials: it is not repeated.
    throw new ConfigError("SMTP_URL: must be an smtp:// or smtps:// URL");
  }
  return raw;
}

// `Name <address>` or a bare address; one line, the address without spaces or angle brackets.
const MAIL_FROM = /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;

function mailFrom(env: NodeJS.ProcessEnv): string {
  const raw = text(env, "MAIL_FROM") ?? "formdeck <formdeck@localhost>";
  if (!MAIL_FROM.test(raw)) {
    throw new ConfigError(
      `MAIL_FROM: must be an address, optionally with a display name ("Forms <forms@example.com>"), got "${raw}"`,
    );
  }
  return raw;
}

function retryDelays(env: NodeJS.ProcessEnv): readonly number[] {
  const raw = text(env, "DELIVERY_RETRY_DELAYS_SECONDS");
  if (raw === null) return DEFAULT_RETRY_DELAYS_SECONDS;
  const delays = raw.split(",").map((entry) => entry.trim());
  if (delays.length > 20 || delays.some((d) => !/^[0-9]{1,6}$/.test(d) || Number(d) > 86_400)) {
    throw new ConfigError(
      `DELIVERY_RETRY_DELAYS_SECONDS: must be at most 20 comma-separated integers from 0 to 86400, got "${raw}"`,
    );
  }
  return Object.freeze(delays.map(Number));
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** Reads and checks the environment once; every later reader gets the same frozen object. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = text(env, "LOG_LEVEL") ?? "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  const databaseUrl = text(env, "DATABASE_URL");
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL: must be a postgres:// or postgresql:// URL");
  }
  const redisUrl = text(env, "REDIS_URL");
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError("REDIS_URL: must be a redis:// or rediss:// URL");
  }
  const rateLimitMax = integer(env, "RATE_LIMIT_MAX", 600, 1, 1_000_000_000);
  const port = integer(env, "PORT", 3000, 0, 65535);
  return Object.freeze({
    port,
    host: text(env, "HOST") ?? "0.0.0.0",
    dataDir: path.resolve(text(env, "DATA_DIR") ?? "./data"),
    databaseUrl,
    redisUrl,
    rateLimitMax,
    rateLimitWindowSeconds: integer(env, "RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
    rateLimitUnauthenticatedMax: integer(
      env,
      "RATE_LIMIT_UNAUTHENTICATED_MAX",
      Math.max(rateLimitMax, 600),
      1,
      1_000_000_000,
    ),
    bodyLimitBytes: integer(env, "BODY_LIMIT_BYTES", 1_048_576, 1024, 104_857_600),
    requestTimeoutSeconds: integer(env, "REQUEST_TIMEOUT_SECONDS", 30, 1, 3_600),
    autoCloseSweepSeconds: integer(env, "AUTO_CLOSE_SWEEP_SECONDS", 60, 1, 86_400),
    retentionSweepSeconds: integer(env, "RETENTION_SWEEP_SECONDS", 3_600, 1, 86_400),
    logLevel,
    trustProxy: trustProxy(env),
    countryHeader: countryHeader(env),
    captchaVerifyUrls: Object.freeze({
      turnstile: httpUrl(env, "TURNSTILE_VERIFY_URL", DEFAULT_VERIFY_URLS.turnstile),
      hcaptcha: httpUrl(env, "HCAPTCHA_VERIFY_URL", DEFAULT_VERIFY_URLS.hcaptcha),
      recaptcha: httpUrl(env, "RECAPTCHA_VERIFY_URL", DEFAULT_VERIFY_URLS.recaptcha),
    }),
    captchaMinScore: fraction(env, "CAPTCHA_MIN_SCORE", 0.5),
    captchaScriptUrls: Object.freeze({
      turnstile: httpUrl(env, "TURNSTILE_SCRIPT_URL", DEFAULT_CAPTCHA_SCRIPT_URLS.turnstile),
      hcaptcha: httpUrl(env, "HCAPTCHA_SCRIPT_URL", DEFAULT_CAPTCHA_SCRIPT_URLS.hcaptcha),
      recaptcha: httpUrl(env, "RECAPTCHA_SCRIPT_URL", DEFAULT_CAPTCHA_SCRIPT_URLS.recaptcha),
    }),
    submissionBodyLimitBytes: integer(
      env,
      "SUBMISSION_BODY_LIMIT_BYTES",
      1_048_576,
      1024,
      104_857_600,
    ),
    intakeRateLimitMax: integer(env, "INTAKE_RATE_LIMIT_MAX", 30, 1, 1_000_000_000),
    intakeRateLimitWindowSeconds: integer(env, "INTAKE_RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
    submissionCountFoldSeconds: integer(env, "SUBMISSION_COUNT_FOLD_SECONDS", 5, 1, 86_400),
    webhookAllowPrivateNetworks: flag(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS"),
    smtpUrl: smtpUrl(env),
    mailFrom: mailFrom(env),
    deliveryRetryDelaysSeconds: retryDelays(env),
    uploadMaxFiles: integer(env, "UPLOAD_MAX_FILES", 10, 0, 100),
    uploadMaxFileBytes: integer(env, "UPLOAD_MAX_FILE_BYTES", 10_485_760, 1, 104_857_600),
    uploadMaxTotalBytes: integer(env, "UPLOAD_MAX_TOTAL_BYTES", 26_214_400, 1, 1_073_741_824),
    uploadMaxInFlightBytes: integer(
      env,
      "UPLOAD_MAX_IN_FLIGHT_BYTES",
      104_857_600,
      1_048_576,
      17_179_869_184,
    ),
    uploadRateWhileBusy: integer(env, "UPLOAD_RATE_WHILE_BUSY", 8_000_000, 0, 10_000_000_000),
    publicUrl: httpUrl(env, "PUBLIC_URL", `http://localhost:${port}`).replace(/\/+$/, ""),
  });
}
