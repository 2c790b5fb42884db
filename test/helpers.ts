import { after, before } from "node:test";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import { buildApp } from "../src/app.ts";
import type { Plan, Scope } from "../src/auth/api-keys.ts";
import { type Config, loadConfig } from "../src/config.ts";
import { type Database, openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import type { SpareCapacity } from "../src/jobs/spare-capacity.ts";
import type { SubmissionEvents } from "../src/notifications/submission-events.ts";
import { createRateLimiter } from "../src/rate-limit/create-rate-limiter.ts";
import type { DeliveryQueue } from "../src/webhooks/delivery-queue.ts";
import { checkEveryResponse } from "./http/response-conformance.ts";
import {
  eventsWithoutQueue,
  headerCountries,
  TokenCaptcha,
} from "./intake/test-implementations.ts";

/** The store under test: PostgreSQL when DATABASE_URL is set, else an in-memory PGlite. */
let shared: Promise<Database> | null = null;

export function testDatabase(): Promise<Database> {
  shared ??= (async () => {
    const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: null });
    await migrate(db);
    return db;
  })();
  return shared;
}

export async function closeTestDatabase() {
  if (shared) await (await shared).close();
  shared = null;
}

const silentLog = { warn() {}, info() {} };

/**
 * An app on the shared store, with its own limiters (Redis when REDIS_URL is set), serving the
 * intake with the test's captcha verifier and country resolver (a header names the country).
 * Every response its `inject` gives is checked against the app's OpenAPI document: one that the
 * document does not describe fails the test that asked for it.
 */
export async function buildTestApp(
  overrides: Partial<Config> = {},
  {
    captcha = new TokenCaptcha(),
    events,
    deliveryQueue,
    capacity,
    logger,
    beforeReady,
  }: {
    captcha?: TokenCaptcha;
    events?: SubmissionEvents;
    deliveryQueue?: DeliveryQueue;
    /** How the intake's relay learns that requests saturate the app: never, when absent. */
    capacity?: SpareCapacity;
    /** Silent when absent. */
    logger?: FastifyBaseLogger;
    /** Hooks a test adds to the app, which it can no longer take once ready. */
    beforeReady?: (app: FastifyInstance) => void;
  } = {},
) {
  const config = { ...loadConfig({}), ...overrides };
  const db = await testDatabase();
  const limiter = await createRateLimiter({
    redisUrl: process.env.REDIS_URL ?? null,
    windowSeconds: config.rateLimitWindowSeconds,
    log: silentLog,
  });
  const intakeLimiter = await createRateLimiter({
    redisUrl: process.env.REDIS_URL ?? null,
    windowSeconds: config.intakeRateLimitWindowSeconds,
    log: silentLog,
  });
  const app = await buildApp({
    config,
    db,
    limiter,
    intake: {
      limiter: intakeLimiter,
      captcha,
      countries: headerCountries,
      events: events ?? eventsWithoutQueue(config),
      ...(capacity ? { capacity } : {}),
    },
    ...(deliveryQueue ? { deliveryQueue } : {}),
    ...(logger ? { logger } : {}),
  });
  beforeReady?.(app);
  await checkEveryResponse(app);
  return {
    app,
    db,
    captcha,
    async close() {
      await app.close();
      await limiter.close();
      await intakeLimiter.close();
    },
  };
}

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

/**
 * The set-up every suite needs, in one place: registers a `before` hook that builds an app with
 * `buildTestApp`'s arguments and an `after` hook that closes it, then the shared store. Returns
 * the suite's app: an object whose properties (`app`, `db`, `captcha`, `close`) are there once
 * the `before` hook has run. Top-level `before` hooks start as they are registered, not one after
 * another: another top-level `before` in the file cannot count on the app being built.
 */
export function useTestApp(...args: Parameters<typeof buildTestApp>): TestApp {
  const testApp = {} as TestApp;
  let built: TestApp | undefined;
  before(async () => {
    built = await buildTestApp(...args);
    Object.assign(testApp, built);
  });
  after(async () => {
    await built?.close();
    await closeTestDatabase();
  });
  return testApp;
}

/** A new organization, so that every test has data no other test touches. */
export async function createOrg(plan: Plan = "free") {
  return createOrganization(await testDatabase(), { name: `test org ${plan}`, plan });
}

/** A plaintext key of a new key in `organizationId`. */
export async function createKey(organizationId: string, scope: Scope = "full") {
  return (await createApiKey(await testDatabase(), { organizationId, scope, name: `${scope} key` }))
    .key;
}

/** A new organization with a full and a read key. */
export async function createTenant(plan: Plan = "free") {
  const org = await createOrg(plan);
  return {
    org,
    fullKey: await createKey(org.id, "full"),
    readKey: await createKey(org.id, "read"),
  };
}
