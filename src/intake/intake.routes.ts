import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyError, FastifyReply, FastifySchemaCompiler } from "fastify";
import { Type } from "typebox";
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import type { FileLinks } from "../files/file-links.ts";
import { UploadBudget } from "../files/upload-budget.ts";
import { UploadPace } from "../files/upload-pace.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import type { HostedPages } from "../hosted/hosted-pages.ts";
import { fieldRefusalOf, refusalState } from "../hosted/refusal.ts";
import { REPLAYED, success } from "../http/api-responses.ts";
import { toAppError } from "../http/error-handling.ts";
import { AppError, errorBody } from "../http/errors.ts";
import { validatorCompiler } from "../http/validation.ts";
import { IdempotencyHeaders, REPLAYED_HEADER } from "../idempotency/idempotency-key.ts";
import type { SpareCapacity } from "../jobs/spare-capacity.ts";
import { LeastRecentlyUsed } from "../least-recently-used.ts";
import type { EventRelay } from "../notifications/event-relay.ts";
import type { SubmissionEvents } from "../notifications/submission-events.ts";
import type { RateLimiter } from "../rate-limit/rate-limiter.ts";
import { TaskSlots } from "../task-slots.ts";
import { corsOrigin } from "./access-rules.ts";
import type { CaptchaVerifier } from "./captcha.ts";
import type { CountryResolver } from "./country.ts";
import { findIntakeForm, type IntakeForm } from "./intake.repository.ts";
import { Accepted, FormIdParams, preflight, SubmissionBody, submit } from "./intake.schemas.ts";
import { clientOf, createAdmission, isMultipart } from "./intake-admission.ts";
import { INTAKE_MEDIA_TYPES } from "./intake-body.ts";
import { errorPageFor } from "./intake-errors.ts";
import { answerWhileDraining } from "./lingering-close.ts";
import { receiveSubmission } from "./receive-submission.ts";

/** What the intake needs besides the database: check 1's limiter, check 5's and check 7's sources. */
export interface IntakeDependencies {
  /** Its own window (`INTAKE_RATE_LIMIT_WINDOW_SECONDS`), shared through Redis when configured. */
  limiter: RateLimiter;
  captcha: CaptchaVerifier;
  countries: CountryResolver;
  /** Enqueues an accepted submission's emails and webhooks in its transaction. */
  events: SubmissionEvents;
  /** What the event relay's passes wait for: requests come first (never, unless set). */
  capacity?: SpareCapacity;
}

// The body arrives as bytes and is read by the handler, which knows the form's rules; the schema
// documents it. Params and headers are checked as everywhere else.
const intakeValidator: FastifySchemaCompiler<Record<string, unknown>> = (route) =>
  route.httpPart === "body" ? (data) => ({ value: data }) : validatorCompiler(route);

/**
 * Submissions whose files are written to the store at once; the pool has 10 connections, and the
 * others stay free for every other request while a burst of uploads is written.
 */
const FILE_WRITES_AT_ONCE = 2;

/** Forms each instance keeps for its intake (see intake-admission.ts). */
const KEPT_FORMS = 1_000;

/** The longest the rest of a body answered early is read for (see drainRequest). */
const DRAIN_MS = 10_000;

const ALLOWED_HEADERS = "Content-Type, Accept, Idempotency-Key";
const EXPOSED_HEADERS =
  "Idempotent-Replayed, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset";

export const intakeRoutes: FastifyPluginAsyncTypebox<{
  db: Database;
  config: Config;
  intake: IntakeDependencies;
  pages: HostedPages;
  /** Signs the files' links of the record that notifications carry. */
  links: FileLinks;
  /** Woken when a submission stored in one statement leaves its event in the outbox. */
  relay: Pick<EventRelay, "wake">;
}> = async (app, { db, config, intake, pages, links, relay }) => {
  // Only the three submission bodies; anything else is a 415 naming them.
  app.removeAllContentTypeParsers();
  for (const type of INTAKE_MEDIA_TYPES) {
    if (type === "multipart/form-data") {
      // Left unread: the handler streams it, part by part. An empty one is no body at all.
      app.addContentTypeParser(type, (request, payload, done) =>
        done(null, request.headers["content-length"] === "0" ? undefined : payload),
      );
    } else {
      app.addContentTypeParser(type, { parseAs: "buffer" }, (_request, body, done) =>
        done(null, body),
      );
    }
  }
  const uploads = {
    config,
    budget: new UploadBudget(config.uploadMaxInFlightBytes),
    fileWrites: new TaskSlots(FILE_WRITES_AT_ONCE),
    pace: new UploadPace(config.uploadRateWhileBusy, () => intake.capacity?.inFlight ?? 0),
  };
  // The rest of a body answered early is read, up to the largest body the intake takes, so that
  // the client gets the answer rather than a reset connection.
  const drain = {
    maxBytes: config.uploadMaxTotalBytes + config.submissionBodyLimitBytes,
    maxMs: DRAIN_MS,
    pace: uploads.pace,
  };
  app.decorateRequest("intakeForm", null);
  app.decorateRequest("intakeCountry", null);
  app.decorateRequest("intakeFormKept", false);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    let known: AppError;
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      known = new AppError(
        "unsupported_media_type",
        `Content-Type: must be ${INTAKE_MEDIA_TYPES.join(", ")}`,
      );
    } else if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      known = new AppError(
        "payload_too_large",
        `body: must be at most ${config.submissionBodyLimitBytes} bytes`,
      );
    } else {
      known = toAppError(error, request, reply);
    }
    // Busy with other uploads (the store sets its own when it is the one unreachable).
    if (known.code === "service_unavailable" && !reply.hasHeader("Retry-After")) {
      reply.header("Retry-After", "5");
    }
    const page = errorPageFor(request, known);
    if (!page) return reply.code(known.statusCode).send(errorBody(known.code, known.message));
    // A hosted form's refused answers: the form again, as typed, each message beside its field.
    const refusal = fieldRefusalOf(error);
    const form = request.intakeForm;
    if (refusal && form?.type === "hosted") {
      return pages.refused(reply, form, refusalState(refusal.values, refusal.fieldErrors));
    }
    return pages.error(reply, known.statusCode, page, form);
  });

  // Every answer, errors included, so that a page on another origin can read why it was refused.
  app.addHook("onSend", async (request, reply) => {
    if (request.raw.complete === false) answerWhileDraining(reply, drain);
    reply.header("Vary", "Origin");
    const rule = request.intakeForm ? (request.intakeForm.settings.allowedDomains ?? "") : null;
    const origin = corsOrigin(request.headers.origin, request.host, rule);
    if (!origin) return;
    reply.header("Access-Control-Allow-Origin", origin);
    if (request.method === "OPTIONS") {
      reply.header("Access-Control-Allow-Methods", "POST");
      reply.header("Access-Control-Allow-Headers", ALLOWED_HEADERS);
      reply.header("Access-Control-Max-Age", "600");
    } else {
      reply.header("Access-Control-Expose-Headers", EXPOSED_HEADERS);
    }
  });

  const admission = createAdmission(db, config, intake, new LeastRecentlyUsed(KEPT_FORMS));

  app.post(
    "/f/:formId",
    {
      config: { drainsItsBody: true },
      bodyLimit: config.submissionBodyLimitBytes,
      onRequest: admission.admit,
      validatorCompiler: intakeValidator,
      schema: {
        ...submit.schema,
        consumes: [...INTAKE_MEDIA_TYPES],
        headers: IdempotencyHeaders,
        params: FormIdParams,
        body: SubmissionBody,
        response: submit.responses(
          {
            201: success(Accepted, "Accepted (JSON clients).", REPLAYED),
            303: success(
              Type.Null(),
              "Accepted (browsers): to the thank-you page or the custom redirect.",
              {
                Location: {
                  type: "string",
                  description: "Where the browser goes next.",
                  required: true,
                },
              },
            ),
          },
          "rate_limit_exceeded",
          "not_found",
          "forbidden",
          "form_closed",
          "captcha_failed",
          "payload_too_large",
          "unsupported_media_type",
          "unprocessable_entity",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const receive = (oneStatement: boolean) =>
        receiveSubmission(db, intake, {
          form: request.intakeForm as IntakeForm,
          country: request.intakeCountry,
          client: clientOf(request),
          request,
          uploads,
          links,
          oneStatement,
          relay,
        });
      let received: Awaited<ReturnType<typeof receive>>;
      try {
        received = await receive(!isMultipart(request));
      } catch (error) {
        if (!(await admission.checkAnew(request, error))) throw error;
        received = await receive(false);
      }
      const { response, replayed } = received;
      const untyped = reply as FastifyReply;
      if (replayed) untyped.header(REPLAYED_HEADER, "true");
      if (response.status === 303) {
        return untyped.code(303).header("Location", response.location).send();
      }
      return untyped
        .code(response.status)
        .type("application/json; charset=utf-8")
        .send(response.body);
    },
  );

  app.options(
    "/f/:formId",
    {
      config: { drainsItsBody: true },
      schema: {
        ...preflight.schema,
        params: FormIdParams,
        response: preflight.responses(
          { 204: success(Type.Null(), "The CORS headers, when the origin may post.") },
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const { formId } = request.params;
      request.intakeForm = FORM_ID.test(formId)
        ? await findIntakeForm(db, formId, new Date())
        : null;
      return reply.code(204).send(null);
    },
  );
};
