import type { FastifyReply, FastifyRequest } from "fastify";
import { setRateLimitHeaders, tooManyRequests } from "../auth/authenticate.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import { AppError } from "../http/errors.ts";
import type { LeastRecentlyUsed } from "../least-recently-used.ts";
import type { IntakeForm } from "./intake.repository.ts";
import type { IntakeDependencies } from "./intake.routes.ts";
import { admitForm, type IntakeClient, loadForm } from "./intake.service.ts";
import { FormChanged, needsOnlyItsRow } from "./one-statement-intake.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The form posted to, once found: its rules decide CORS and the closed page. */
    intakeForm: IntakeForm | null;
    /** Whether intakeForm is this instance's kept copy rather than read for this request. */
    intakeFormKept: boolean;
    /** The client's country, once checks 2 to 5 passed. */
    intakeCountry: string | null;
  }
}

export const clientOf = (request: FastifyRequest): IntakeClient => ({
  ip: request.ip,
  host: request.host,
  headers: request.headers,
});

/** A multipart body is read as it arrives, once: it can never be checked a second time. */
export const isMultipart = (request: FastifyRequest) =>
  /^multipart\/form-data/i.test(request.headers["content-type"] ?? "");

/**
 * Checks 1 to 5 of the intake, before the body is read. A form is read from the store once per
 * change of it: a form that needs only its row (one-statement-intake.ts) is kept by this
 * instance, and a submission to it checked against the kept copy. Nothing is decided on a stale
 * copy: the statement that stores checks the form's version, and a refusal made on a kept copy
 * is made again on the form read anew (`checkAnew`).
 */
export function createAdmission(
  db: Database,
  config: Config,
  intake: IntakeDependencies,
  forms: LeastRecentlyUsed<IntakeForm>,
) {
  /** Checks 2 to 5 on the form as the store has it now, keeping it when it needs only its row. */
  async function admitAsStored(request: FastifyRequest, formId: string, now: Date) {
    request.intakeFormKept = false;
    const form = await loadForm(db, formId, now).catch((error) => {
      forms.delete(formId);
      throw error;
    });
    request.intakeForm = form;
    if (needsOnlyItsRow(form, now)) forms.set(form.id, form);
    else forms.delete(formId);
    request.intakeCountry = admitForm(form, clientOf(request), intake.countries, now);
  }

  return {
    async admit(request: FastifyRequest, reply: FastifyReply) {
      const { formId } = request.params as { formId: string };
      // An id that cannot be ours shares one bucket per address rather than making keys of any size.
      const bucket = `intake:${request.ip}:${FORM_ID.test(formId) ? formId : "-"}`;
      const decision = await intake.limiter.consume(bucket, config.intakeRateLimitMax);
      if (!decision.allowed) throw tooManyRequests(reply, decision);
      setRateLimitHeaders(reply, decision);
      const now = new Date();
      const kept = isMultipart(request) ? undefined : forms.get(formId);
      if (kept && needsOnlyItsRow(kept, now)) {
        try {
          request.intakeForm = kept;
          request.intakeFormKept = true;
          request.intakeCountry = admitForm(kept, clientOf(request), intake.countries, now);
          return;
        } catch {
          // Refused on the kept copy: decided again on the form as it is now.
        }
      }
      await admitAsStored(request, formId, now);
    },

    /**
     * Whether `error`, thrown while the submission was checked and stored, means that it is to
     * be checked again on the form read anew: the form changed before the store, or a refusal
     * was decided on the kept copy. Then checks 2 to 5 are made again, and true is returned.
     */
    async checkAnew(request: FastifyRequest, error: unknown): Promise<boolean> {
      const refusedOnKeptCopy =
        request.intakeFormKept && error instanceof AppError && error.statusCode < 500;
      if (!(error instanceof FormChanged) && !refusedOnKeptCopy) return false;
      const { formId } = request.params as { formId: string };
      await admitAsStored(request, formId, new Date());
      return true;
    },
  };
}
