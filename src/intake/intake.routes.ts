import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaCompiler } from "fastify";
import { type TSchema, Type } from "typebox";
import { setRateLimitHeaders, tooManyRequests } from "../auth/authenticate.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import { apiOperation, REPLAYED, success } from "../http/api-responses.ts";
import { toAppError } from "../http/error-handling.ts";
import { AppError, errorBody, formNotFound } from "../http/errors.ts";
import { validatorCompiler } from "../http/validation.ts";
import { IdempotencyHeaders, REPLAYED_HEADER } from "../idempotency/idempotency-key.ts";
import type { RateLimiter } from "../rate-limit/rate-limiter.ts";
import { corsOrigin } from "./access-rules.ts";
import type { CaptchaVerifier } from "./captcha.ts";
import type { CountryResolver } from "./country.ts";
import { findIntakeForm, type IntakeForm } from "./intake.repository.ts";
import { admitForm, type IntakeClient, loadForm } from "./intake.service.ts";
import { INTAKE_MEDIA_TYPES } from "./intake-body.ts";
import { errorPageFor } from "./intake-errors.ts";
import { customThanksPage, defaultThanksPage, sendPage } from "./intake-pages.ts";
import { receiveSubmission } from "./receive-submission.ts";

/** What the intake needs besides the database: check 1's limiter, check 5's and check 7's sources. */
export interface IntakeDependencies {
  /** Its own window (`INTAKE_RATE_LIMIT_WINDOW_SECONDS`), shared through Redis when configured. */
  limiter: RateLimiter;
  captcha: CaptchaVerifier;
  countries: CountryResolver;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The form posted to, once found: its rules decide CORS and the closed page. */
    intakeForm: IntakeForm | null;
    /** The client's country, once checks 2 to 5 passed. */
    intakeCountry: string | null;
  }
}

const FormIdParams = Type.Object({ formId: Type.String({ description: "Form id" }) });

const SubmissionBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    "The form's fields by name: urlencoded or multipart (a repeated name becomes an array of " +
    "strings) or a JSON object (values stored as sent). Not stored: the honeypot field and the " +
    "captcha token fields.",
  examples: [{ email: "ada@example.com", message: "Hello" }],
});

const Accepted = Type.Object({
  ok: Type.Literal(true),
  id: Type.String({ description: "The submission's id, sub_…" }),
});

const submit = apiOperation({
  operationId: "submitForm",
  summary: "Submit a form",
  description:
    "Public: no api-key. Browsers post here from any page (an HTML form's action, or fetch), " +
    "servers directly. Checks, in order: per address and form rate limit (429), the form " +
    "exists (404), is open (403 form_closed), the address is not blacklisted and the country " +
    "allowed (403 forbidden), the body (413, 415, 422), the captcha (403 captcha_failed). A " +
    "filled honeypot or a page outside allowedDomains is kept as spam and answered as a " +
    "success. A client whose Accept prefers text/html gets a 303 to the thank-you page (or " +
    "the form's custom redirect) and HTML error pages; every other client gets JSON.",
  tags: ["intake"],
  access: "public",
  htmlErrors: true,
});
const preflight = apiOperation({
  operationId: "preflightSubmitForm",
  summary: "CORS preflight of a submission",
  description:
    "Access-Control-Allow-Origin is the request's Origin when the form's allowedDomains is " +
    "empty or allows it; no CORS headers otherwise.",
  tags: ["intake"],
  access: "public",
});
const thanks = apiOperation({
  operationId: "thankYouPage",
  summary: "The thank-you page",
  description:
    "HTML: the form's own thank-you page (tp* members) when useCustomThankYouPage is on, " +
    "else a plain one. Browsers are sent here after a submission.",
  tags: ["intake"],
  access: "public",
  htmlErrors: true,
});

// The body arrives as bytes and is read by the handler, which knows the form's rules; the schema
// documents it. Params and headers are checked as everywhere else.
const intakeValidator: FastifySchemaCompiler<Record<string, unknown>> = (route) =>
  route.httpPart === "body" ? (data) => ({ value: data }) : validatorCompiler(route);

const clientOf = (request: FastifyRequest): IntakeClient => ({
  ip: request.ip,
  host: request.host,
  headers: request.headers,
});

const ALLOWED_HEADERS = "Content-Type, Accept, Idempotency-Key";
const EXPOSED_HEADERS =
  "Idempotent-Replayed, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset";

export const intakeRoutes: FastifyPluginAsyncTypebox<{
  db: Database;
  config: Config;
  intake: IntakeDependencies;
}> = async (app, { db, config, intake }) => {
  // Only the three submission bodies; anything else is a 415 naming them.
  app.removeAllContentTypeParsers();
  for (const type of INTAKE_MEDIA_TYPES) {
    app.addContentTypeParser(type, { parseAs: "buffer" }, (_request, body, done) =>
      done(null, body),
    );
  }
  app.decorateRequest("intakeForm", null);
  app.decorateRequest("intakeCountry", null);

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
    const page = errorPageFor(request, known);
    if (page) return sendPage(reply, known.statusCode, page);
    return reply.code(known.statusCode).send(errorBody(known.code, known.message));
  });

  // Every answer, errors included, so that a page on another origin can read why it was refused.
  app.addHook("onSend", async (request, reply) => {
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

  /** Checks 1 to 5, before the body is read: a refused request never has its body parsed. */
  async function admit(request: FastifyRequest, reply: FastifyReply) {
    const { formId } = request.params as { formId: string };
    // An id that cannot be ours shares one bucket per address rather than making keys of any size.
    const bucket = `intake:${request.ip}:${FORM_ID.test(formId) ? formId : "-"}`;
    const decision = await intake.limiter.consume(bucket, config.intakeRateLimitMax);
    if (!decision.allowed) throw tooManyRequests(reply, decision);
    setRateLimitHeaders(reply, decision);
    const now = new Date();
    request.intakeForm = await loadForm(db, formId, now);
    request.intakeCountry = admitForm(request.intakeForm, clientOf(request), intake.countries, now);
  }

  app.post(
    "/f/:formId",
    {
      bodyLimit: config.submissionBodyLimitBytes,
      onRequest: admit,
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
      const form = request.intakeForm as IntakeForm;
      const { response, replayed } = await receiveSubmission(db, intake, {
        form,
        country: request.intakeCountry,
        client: clientOf(request),
        request,
      });
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

  app.get(
    "/f/:formId/thanks",
    {
      schema: {
        ...thanks.schema,
        params: FormIdParams,
        response: thanks.responses(
          {
            200: {
              description: "The page",
              content: { "text/html": { schema: Type.String() } },
            } as unknown as TSchema,
          },
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const { formId } = request.params;
      const form = FORM_ID.test(formId) ? await findIntakeForm(db, formId, new Date()) : null;
      if (!form) throw formNotFound();
      const html = form.settings.useCustomThankYouPage
        ? customThanksPage(form.settings)
        : defaultThanksPage();
      return sendPage(reply, 200, html);
    },
  );
};
