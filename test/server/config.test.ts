import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import path from "node:path";
import { after, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";

after(closeTestDatabase);

test("defaults: embedded store under ./data, port 3000, 600 requests a minute", () => {
  assert.deepEqual(loadConfig({}), {
    port: 3000,
    host: "0.0.0.0",
    dataDir: path.resolve("./data"),
    databaseUrl: null,
    redisUrl: null,
    rateLimitMax: 600,
    rateLimitWindowSeconds: 60,
    rateLimitUnauthenticatedMax: 600,
    bodyLimitBytes: 1_048_576,
    requestTimeoutSeconds: 30,
    autoCloseSweepSeconds: 60,
    retentionSweepSeconds: 3600,
    logLevel: "info",
    trustProxy: false,
    countryHeader: null,
    captchaVerifyUrls: {
      turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
      hcaptcha: "https://api.hcaptcha.com/siteverify",
      recaptcha: "https://www.google.com/recaptcha/api/siteverify",
    },
    captchaMinScore: 0.5,
    captchaScriptUrls: {
      turnstile: "https://challenges.cloudflare.com/turnstile/v0/api.js",
      hcaptcha: "https://js.hcaptcha.com/1/api.js",
      recaptcha: "https://www.google.com/recaptcha/api.js",
    },
    submissionBodyLimitBytes: 1_048_576,
    intakeRateLimitMax: 30,
    intakeRateLimitWindowSeconds: 60,
    submissionCountFoldSeconds: 5,
    webhookAllowPrivateNetworks: false,
    smtpUrl: null,
    mailFrom: "formdeck <formdeck@localhost>",
    deliveryRetryDelaysSeconds: [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000],
    uploadMaxFiles: 10,
    uploadMaxFileBytes: 10_485_760,
    uploadMaxTotalBytes: 26_214_400,
    uploadMaxInFlightBytes: 104_857_600,
    uploadRateWhileBusy: 8_000_000,
    publicUrl: "http://localhost:3000",
  });
});

test("every variable is read", () => {
  const config = loadConfig({
    PORT: "8080",
    HOST: "127.0.0.1",
    DATA_DIR: "/var/lib/formdeck",
    DATABASE_URL: "postgres://u@db/formdeck",
    REDIS_URL: "redis://cache:6379",
    RATE_LIMIT_MAX: "1000",
    RATE_LIMIT_WINDOW_SECONDS: "30",
    RATE_LIMIT_UNAUTHENTICATED_MAX: "50",
    BODY_LIMIT_BYTES: "2048",
    REQUEST_TIMEOUT_SECONDS: "12",
    AUTO_CLOSE_SWEEP_SECONDS: "5",
    RETENTION_SWEEP_SECONDS: "600",
    LOG_LEVEL: "warn",
    TRUST_PROXY: "10.0.0.0/8, 127.0.0.1,loopback",
    COUNTRY_HEADER: "CF-IPCountry",
    TURNSTILE_VERIFY_URL: "http://127.0.0.1:9001/turnstile",
    HCAPTCHA_VERIFY_URL: "http://127.0.0.1:9001/hcaptcha",
    RECAPTCHA_VERIFY_URL: "https://captcha.internal/recaptcha",
    CAPTCHA_MIN_SCORE: "0.7",
    TURNSTILE_SCRIPT_URL: "http://127.0.0.1:9001/turnstile.js",
    HCAPTCHA_SCRIPT_URL: "http://127.0.0.1:9001/hcaptcha.js",
    RECAPTCHA_SCRIPT_URL: "https://captcha.internal/recaptcha.js",
    SUBMISSION_BODY_LIMIT_BYTES: "4096",
    INTAKE_RATE_LIMIT_MAX: "7",
    INTAKE_RATE_LIMIT_WINDOW_SECONDS: "90",
    SUBMISSION_COUNT_FOLD_SECONDS: "2",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    SMTP_URL: "smtps://user:pass@mail.example.com:465",
    MAIL_FROM: "Acme Forms <forms@acme.test>",
    DELIVERY_RETRY_DELAYS_SECONDS: "1, 2,0",
    UPLOAD_MAX_FILES: "3",
    UPLOAD_MAX_FILE_BYTES: "2000",
    UPLOAD_MAX_TOTAL_BYTES: "5000",
    UPLOAD_MAX_IN_FLIGHT_BYTES: "2000000",
    UPLOAD_RATE_WHILE_BUSY: "0",
    PUBLIC_URL: "https://forms.example.com/",
  });
  assert.deepEqual(config, {
    port: 8080,
    host: "127.0.0.1",
    dataDir: "/var/lib/formdeck",
    databaseUrl: "postgres://u@db/formdeck",
    redisUrl: "redis://cache:6379",
    rateLimitMax: 1000,
    rateLimitWindowSeconds: 30,
    rateLimitUnauthenticatedMax: 50,
    bodyLimitBytes: 2048,
    requestTimeoutSeconds: 12,
    autoCloseSweepSeconds: 5,
    retentionSweepSeconds: 600,
    logLevel: "warn",
    trustProxy: ["10.0.0.0/8", "127.0.0.1", "loopback"],
    countryHeader: "cf-ipcountry",
    captchaVerifyUrls: {
      turnstile: "http://127.0.0.1:9001/turnstile",
      hcaptcha: "http://127.0.0.1:9001/hcaptcha",
      recaptcha: "https://captcha.internal/recaptcha",
    },
    captchaMinScore: 0.7,
    captchaScriptUrls: {
      turnstile: "http://127.0.0.1:9001/turnstile.js",
      hcaptcha: "http://127.0.0.1:9001/hcaptcha.js",
      recaptcha: "https://captcha.internal/recaptcha.js",
    },
    submissionBodyLimitBytes: 4096,
    intakeRateLimitMax: 7,
    intakeRateLimitWindowSeconds: 90,
    submissionCountFoldSeconds: 2,
    webhookAllowPrivateNetworks: true,
    smtpUrl: "smtps://user:pass@mail.example.com:465",
    mailFrom: "Acme Forms <forms@acme.test>",
    deliveryRetryDelaysSeconds: [1, 2, 0],
    uploadMaxFiles: 3,
    uploadMaxFileBytes: 2000,
    uploadMaxTotalBytes: 5000,
    uploadMaxInFlightBytes: 2_000_000,
    uploadRateWhileBusy: 0,
    publicUrl: "https://forms.example.com",
  });
  assert.ok(Object.isFrozen(config));
});

test("a bad value is refused with one line naming the variable", () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: "http" }, 'PORT: must be an integer from 0 to 65535, got "http"'],
    [{ PORT: "70000" }, 'PORT: must be an integer from 0 to 65535, got "70000"'],
    [{ RATE_LIMIT_MAX: "0" }, 'RATE_LIMIT_MAX: must be an integer from 1 to 1000000000, got "0"'],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL: must be a postgres:// or postgresql:// URL"],
    [
      { PUBLIC_URL: "forms.example.com" },
      'PUBLIC_URL: must be an http:// or https:// URL, got "forms.example.com"',
    ],
    [{ UPLOAD_MAX_FILES: "101" }, 'UPLOAD_MAX_FILES: must be an integer from 0 to 100, got "101"'],
    [{ REDIS_URL: "127.0.0.1:6379" }, "REDIS_URL: must be a redis:// or rediss:// URL"],
    [
      { LOG_LEVEL: "loud" },
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ],
    [
      { RETENTION_SWEEP_SECONDS: "0" },
      'RETENTION_SWEEP_SECONDS: must be an integer from 1 to 86400, got "0"',
    ],
    [
      { COUNTRY_HEADER: "CF IPCountry", TRUST_PROXY: "1" },
      'COUNTRY_HEADER: must be an HTTP header name, got "CF IPCountry"',
    ],
    [
      { COUNTRY_HEADER: "CF-IPCountry" },
      "COUNTRY_HEADER: needs TRUST_PROXY, since only a trusted proxy's header can be believed",
    ],
    [
      { HCAPTCHA_SCRIPT_URL: "javascript:alert(1)" },
      'HCAPTCHA_SCRIPT_URL: must be an http:// or https:// URL, got "javascript:alert(1)"',
    ],
    [
      { TURNSTILE_VERIFY_URL: "ftp://x/verify" },
      'TURNSTILE_VERIFY_URL: must be an http:// or https:// URL, got "ftp://x/verify"',
    ],
    [
      { RECAPTCHA_VERIFY_URL: "not a url" },
      'RECAPTCHA_VERIFY_URL: must be an http:// or https:// URL, got "not a url"',
    ],
    [{ CAPTCHA_MIN_SCORE: "1.5" }, 'CAPTCHA_MIN_SCORE: must be a number from 0 to 1, got "1.5"'],
    [{ CAPTCHA_MIN_SCORE: ".5" }, 'CAPTCHA_MIN_SCORE: must be a number from 0 to 1, got ".5"'],
    [
      { TRUST_PROXY: "yes" },
      'TRUST_PROXY: must be false, a hop count or a comma-separated list of proxy addresses and CIDR ranges; "yes" is none of these',
    ],
    [
      { TRUST_PROXY: "10.0.0.0/8,10.0.0.1/33" },
      'TRUST_PROXY: must be false, a hop count or a comma-separated list of proxy addresses and CIDR ranges; "10.0.0.1/33" is none of these',
    ],
    [{ TRUST_PROXY: "101" }, 'TRUST_PROXY: a hop count must be at most 100, got "101"'],
    [
      { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "yes" },
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS: must be true or false, got "yes"',
    ],
    [{ SMTP_URL: "http://user:pass@mail" }, "SMTP_URL: must be an smtp:// or smtps:// URL"],
    [
      { MAIL_FROM: "not an address" },
      'MAIL_FROM: must be an address, optionally with a display name ("Forms <forms@example.com>"), got "not an address"',
    ],
    [
      { DELIVERY_RETRY_DELAYS_SECONDS: "5,soon" },
      'DELIVERY_RETRY_DELAYS_SECONDS: must be at most 20 comma-separated integers from 0 to 86400, got "5,soon"',
    ],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => loadConfig(env), new ConfigError(message));
  }
});

test("TRUST_PROXY: true is one hop, false and 0 are none, a number is a hop count", () => {
  assert.equal(loadConfig({ TRUST_PROXY: "true" }).trustProxy, 1);
  assert.equal(loadConfig({ TRUST_PROXY: "2" }).trustProxy, 2);
  assert.equal(loadConfig({ TRUST_PROXY: "false" }).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: "0" }).trustProxy, false);
  assert.deepEqual(loadConfig({ TRUST_PROXY: "::1, fd00::/8" }).trustProxy, ["::1", "fd00::/8"]);
});

// Buckets may live in a Redis shared with other runs: each test uses addresses of its own.
const someAddress = () => `198.18.${randomInt(256)}.${randomInt(256)}`;

const keyless = (remoteAddress: string, forwardedFor: string) => ({
  method: "GET" as const,
  url: "/api/v1/forms",
  remoteAddress,
  headers: { "x-forwarded-for": forwardedFor },
});

test("behind a proxy, keyless requests are limited per forwarded client address", async () => {
  const built = await buildTestApp({ trustProxy: 1, rateLimitUnauthenticatedMax: 1 });
  const [proxy, client, other] = [someAddress(), someAddress(), someAddress()];
  try {
    assert.equal((await built.app.inject(keyless(proxy, client))).statusCode, 401);
    assert.equal((await built.app.inject(keyless(proxy, client))).statusCode, 429);
    assert.equal((await built.app.inject(keyless(proxy, other))).statusCode, 401);
  } finally {
    await built.close();
  }
});

test("without TRUST_PROXY, a forwarded address cannot escape the limit", async () => {
  const built = await buildTestApp({ rateLimitUnauthenticatedMax: 1 });
  const client = someAddress();
  try {
    assert.equal((await built.app.inject(keyless(client, someAddress()))).statusCode, 401);
    assert.equal((await built.app.inject(keyless(client, someAddress()))).statusCode, 429);
  } finally {
    await built.close();
  }
});
