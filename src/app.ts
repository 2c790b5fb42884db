import Fastify, { type FastifyBaseLogger } from "fastify";
import type { KeyOwner } from "./auth/api-keys.repository.ts";
import { registerAuthentication } from "./auth/authenticate.ts";
import { KeyCache } from "./auth/key-cache.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/database.ts";
import { FileLinks } from "./files/file-links.ts";
import { fileLinkRoutes, fileRoutes } from "./files/files.routes.ts";
import { formsRoutes } from "./forms/forms.routes.ts";
import { healthRoutes } from "./health/health.routes.ts";
import { homeRoutes } from "./home/home.routes.ts";
import { FormViewCache } from "./hosted/form-view-cache.ts";
import { answerHeldViewsFirst } from "./hosted/held-views.ts";
import { hostedRoutes } from "./hosted/hosted.routes.ts";
import { HostedPages } from "./hosted/hosted-pages.ts";
import { API_PREFIX } from "./http/api-prefix.ts";
import { registerClientAddress, trustFunction } from "./http/client-address.ts";
import {
  clientErrorHandler,
  frameworkErrors,
  registerErrorHandling,
} from "./http/error-handling.ts";
import { undecodableUrl } from "./http/errors.ts";
import { registerExpectations } from "./http/expectations.ts";
import { registerJsonBodyParser } from "./http/json-body.ts";
import { lingerAfterEarlyAnswer } from "./http/lingering-close.ts";
import { registerOpenApi } from "./http/openapi.ts";
import { requestIdOf } from "./http/request-id.ts";
import { requestLoggerOf, writes } from "./http/request-logger.ts";
import { registerSecurityHeaders } from "./http/security-headers.ts";
import { hasDecodableQuery, validatorCompiler } from "./http/validation.ts";
import { type IntakeDependencies, intakeRoutes } from "./intake/intake.routes.ts";
import { emailsRoutes } from "./notifications/email/emails.routes.ts";
import { type EventRelay, nothingPending, startEventRelay } from "./notifications/event-relay.ts";
import type { RateLimiter } from "./rate-limit/rate-limiter.ts";
import { submissionsRoutes } from "./submissions/submissions.routes.ts";
import { type DeliveryQueue, noDeliveryQueue } from "./webhooks/delivery-queue.ts";
import { webhooksRoutes } from "./webhooks/webhooks.routes.ts";

export interface AppDependencies {
  config: Config;
  db: Database;
  limiter: RateLimiter;
  /**
   * The intake's limiter, captcha verifier and country resolver. Without them the app serves no
   * intake (`POST /f/{formId}` and its pages), as in tests of the API alone.
   */
  intake?: IntakeDependencies;
  /**
   * Where webhook attempts are enqueued (the test event, redeliveries). Without it, as in tests
   * of the API alone, those two operations answer 503.
   */
  deliveryQueue?: DeliveryQueue;
  /** Silent when absent, as in tests. */
  logger?: FastifyBaseLogger;
  /**
   * Benchmarks only, never set from configuration: every keyed route acts as this owner with no
   * key check and no rate limit, so that their cost can be measured as a difference.
   */
  withoutAuthenticationAs?: KeyOwner;
}

/** Builds the HTTP application; the caller owns the database and the limiter and closes them. */
export async function buildApp(dependencies: AppDependencies) {
  const { config, db, limiter, logger, withoutAuthenticationAs, intake, deliveryQueue } =
    dependencies;
  const app = Fastify({
    ...(logger
      ? { loggerInstance: logger, childLoggerFactory: requestLoggerOf(logger) }
      : { logger: false }),
    bodyLimit: config.bodyLimitBytes,
    // A client that starts a request and never finishes it must not hold a connection forever.
    requestTimeout: config.requestTimeoutSeconds * 1000,
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutSeconds * 1000),
      connectionsCheckingInterval: Math.min(30_000, config.requestTimeoutSeconds * 500),
    },
    // Fastify's reading of X-Forwarded-Host and -Proto follows the same proxies; the client's
    // address is ours (registerClientAddress), which accepts only valid addresses.
    trustProxy: trustFunction(config.trustProxy) ?? false,
    genReqId: requestIdOf,
    // A form id far longer than ours still reaches the route, to be answered 404 after the key check.
    routerOptions: { maxParamLength: 65_536 },
    clientErrorHandler,
    // While draining, a request that still arrives on an open connection is served (with
    // `Connection: close`) rather than refused with a body outside the spec's shape.
    return503OnClosing: false,
    frameworkErrors,
  });
  registerClientAddress(app, config.trustProxy);
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandling(app);
  registerSecurityHeaders(app);
  registerExpectations(app);
  registerJsonBodyParser(app);
  // Before the key check, as a path that cannot be decoded is refused before routing. Hooks that
  // wait for nothing take `done` rather than return a promise: one microtask less per request each.
  app.addHook("onRequest", (request, _reply, done) => {
    done(hasDecodableQuery(request.url) ? undefined : undecodableUrl());
  });
  app.addHook("onSend", (request, reply, _payload, done) => {
    reply.header("X-Request-Id", request.id);
    // Answered before its body arrived (a 401 for a body still on its way): the rest of that body
    // would be read as the next request, so the connection ends with this answer, lingering so
    // that a client still sending reads the answer rather than a reset. A route that drains its
    // own body keeps the connection instead, unless the client asked for it to close.
    if (request.raw.complete === false) {
      if (!request.routeOptions.config.drainsItsBody) reply.header("Connection", "close");
      lingerAfterEarlyAnswer(request.raw.socket);
    }
    done();
  });
  await registerOpenApi(app);
  if (withoutAuthenticationAs) {
    app.decorateRequest("owner", null as unknown as KeyOwner);
    app.addHook("onRequest", async (request) => {
      request.owner = withoutAuthenticationAs;
    });
  } else {
    const keys = new KeyCache(db);
    app.addHook("onClose", () => keys.close());
    registerAuthentication(app, {
      db,
      keys,
      limiter,
      keyQuota: config.rateLimitMax,
      addressQuota: config.rateLimitUnauthenticatedMax,
    });
  }
  await app.register(homeRoutes);
  await app.register(healthRoutes, { db });
  await app.register(formsRoutes, { prefix: API_PREFIX, db });
  const links = new FileLinks(db, config.publicUrl);
  // The intake leaves the events of what it stores in one statement for this relay.
  const relay = intake ? startEventRelay(db, intake.events, app.log, intake.capacity) : null;
  if (relay) app.addHook("onClose", () => relay.stop());
  const pending = relay ?? nothingPending;
  await app.register(submissionsRoutes, { prefix: API_PREFIX, db, links, pending });
  await app.register(webhooksRoutes, {
    prefix: API_PREFIX,
    db,
    queue: deliveryQueue ?? noDeliveryQueue,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    pending,
  });
  await app.register(emailsRoutes, { prefix: API_PREFIX, db, links, pending });
  await app.register(fileRoutes, { prefix: API_PREFIX, db });
  await app.register(fileLinkRoutes, { db, links });
  if (intake) {
    const pages = new HostedPages(config.captchaScriptUrls);
    await app.register(intakeRoutes, {
      db,
      config,
      intake,
      pages,
      links,
      relay: relay as EventRelay,
    });
    const forms = new FormViewCache(db);
    app.addHook("onClose", () => forms.close());
    await app.register(hostedRoutes, { db, pages, forms });
    const logsEveryRequest = logger !== undefined && writes(logger, "info");
    if (!logsEveryRequest) answerHeldViewsFirst(app, pages, forms);
  }
  return app;
}
