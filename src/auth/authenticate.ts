import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../db/database.ts";
import { AppError } from "../http/errors.ts";
import { addressBucket } from "../rate-limit/address-bucket.ts";
import type { RateLimitDecision, RateLimiter } from "../rate-limit/rate-limiter.ts";
import { findActiveKey, type KeyOwner } from "./api-keys.repository.ts";
import { hashApiKey, type Scope } from "./api-keys.ts";
import type { KeyCache } from "./key-cache.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; routes without one are public. */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** The organization and scope of the request's key, on routes that need one. */
    owner: KeyOwner;
  }
}

export interface AuthOptions {
  db: Database;
  keys: KeyCache;
  limiter: RateLimiter;
  /** Requests per window for one key. */
  keyQuota: number;
  /** Requests per window for one client address sending no valid key. */
  addressQuota: number;
}

export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision) {
  reply.header("X-RateLimit-Limit", String(decision.limit));
  reply.header("X-RateLimit-Remaining", String(decision.remaining));
  reply.header("X-RateLimit-Reset", String(decision.resetAt));
}

export function tooManyRequests(reply: FastifyReply, decision: RateLimitDecision): AppError {
  setRateLimitHeaders(reply, decision);
  reply.header("Retry-After", String(decision.retryAfter));
  return new AppError(
    "rate_limit_exceeded",
    `rate limit: ${decision.limit} requests per window exceeded; retry in ${decision.retryAfter} s`,
  );
}

/**
 * Checks, in the order decisions.md gives: a valid key (401), its quota (429), its scope (403).
 * Requests without a valid key spend a quota of their client address, never an organization's.
 */
export function registerAuthentication(app: FastifyInstance, options: AuthOptions) {
  const { db, keys, limiter, keyQuota, addressQuota } = options;
  app.decorateRequest("owner", null as unknown as KeyOwner);

  async function refuseUnknown(request: FastifyRequest, reply: FastifyReply, reason: string) {
    const decision = await limiter.consume(addressBucket(request.ip), addressQuota);
    if (!decision.allowed) throw tooManyRequests(reply, decision);
    throw new AppError("unauthorized", `api-key: ${reason}`);
  }

  async function checkKey(request: FastifyRequest, reply: FastifyReply, needed: Scope) {
    const key = request.headers["api-key"];
    if (typeof key !== "string" || key === "") {
      return refuseUnknown(request, reply, "the header is required");
    }
    const keyHash = hashApiKey(key);
    const owner = await keys.owner(keyHash, () => findActiveKey(db, keyHash));
    if (!owner) return refuseUnknown(request, reply, "is not a valid key");
    const decision = await limiter.consume(`key:${owner.keyId}`, keyQuota);
    if (!decision.allowed) throw tooManyRequests(reply, decision);
    setRateLimitHeaders(reply, decision);
    if (needed === "full" && owner.scope !== "full") {
      throw new AppError(
        "forbidden",
        `api-key: this key has scope ${owner.scope}; this operation needs scope full`,
      );
    }
    request.owner = owner;
  }

  // Callback style: a public route (a page, the intake) waits for no promise here.
  app.addHook("onRequest", (request, reply, done) => {
    const needed = request.routeOptions.config.scope;
    if (!needed) done();
    else checkKey(request, reply, needed).then(() => done(), done);
  });
}
