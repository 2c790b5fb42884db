// formdeck as src/server.ts builds it, but with no key check and no rate limit: every request acts
// as one organization's full-scope key. The difference to formdeck on the same route is what the
// key check and the rate limit cost.
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { createLogger } from "../../src/logger.ts";
import { createRateLimiter } from "../../src/rate-limit/create-rate-limiter.ts";
import { requiredEnv } from "./server-env.ts";

const config = loadConfig();
// Never the embedded store: a second process on the same PGlite directory would corrupt it.
requiredEnv("DATABASE_URL");
const logger = createLogger(config.logLevel);
const db = await openDatabase(config);
const limiter = await createRateLimiter({
  redisUrl: null,
  windowSeconds: config.rateLimitWindowSeconds,
  log: logger,
});
const app = await buildApp({
  config,
  db,
  limiter,
  logger,
  withoutAuthenticationAs: {
    keyId: "key_bench_without_auth",
    organizationId: requiredEnv("BENCH_ORGANIZATION_ID"),
    scope: "full",
    plan: "paid",
  },
});
await app.listen({ port: config.port, host: config.host });
