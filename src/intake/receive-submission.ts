import type { FastifyRequest } from "fastify";
import type { Database } from "../db/database.ts";
import { DEFAULT_SETTINGS } from "../forms/form-defaults.ts";
import { invalid } from "../http/errors.ts";
import {
  findStoredResponse,
  type KeyedRequest,
  respondOnce,
  type StoredResponse,
} from "../idempotency/idempotency.service.ts";
import { idempotencyKeyOf, requestHash } from "../idempotency/idempotency-key.ts";
import type { IntakeForm } from "./intake.repository.ts";
import type { IntakeDependencies } from "./intake.routes.ts";
import {
  buildSubmission,
  checkCaptcha,
  type IntakeClient,
  storeSubmission,
} from "./intake.service.ts";
import {
  parseJsonObject,
  parseMultipart,
  parseUrlEncoded,
  requireStorableText,
  type SubmittedFields,
} from "./intake-body.ts";
import { prefersHtml } from "./negotiation.ts";

/** Check 6: the body, already within the size limit, as fields. */
async function readFields(request: FastifyRequest): Promise<SubmittedFields> {
  const body = request.body as Buffer | undefined;
  if (!body || body.length === 0) throw invalid("body", "is empty");
  const contentType = String(request.headers["content-type"]);
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase();
  const fields =
    mediaType === "application/json"
      ? parseJsonObject(body)
      : mediaType === "multipart/form-data"
        ? await parseMultipart(body, contentType)
        : parseUrlEncoded(body);
  if (fields.length === 0) throw invalid("body", "is empty");
  requireStorableText(fields);
  return fields;
}

/** The answer to an accepted submission, stored as it is sent so that a retry gets it again. */
function acceptedResponse(form: IntakeForm, id: string, html: boolean): StoredResponse {
  if (!html) return { status: 201, location: "", body: JSON.stringify({ ok: true, id }) };
  const settings = { ...DEFAULT_SETTINGS, ...form.settings };
  // Never a URL taken from the request: the form's own, or its thank-you page.
  const redirect =
    settings.useCustomRedirect && form.plan === "paid" && settings.customSuccessUrl !== ""
      ? settings.customSuccessUrl
      : `/f/${form.id}/thanks`;
  return { status: 303, location: redirect, body: "" };
}

export interface Received {
  form: IntakeForm;
  country: string | null;
  client: IntakeClient;
  request: FastifyRequest;
}

/**
 * Checks 6 to 9 and the store. With an Idempotency-Key, a request already answered is answered
 * again before the captcha is asked (its token was spent), and the store runs at most once.
 */
export async function receiveSubmission(
  db: Database,
  intake: IntakeDependencies,
  { form, country, client, request }: Received,
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const fields = await readFields(request);
  const key = idempotencyKeyOf(request);
  // Keys are the form's: respondents of different forms choose them independently.
  const keyed: KeyedRequest | null =
    key === undefined
      ? null
      : {
          organizationId: form.organizationId,
          key: `${form.id}:${key}`,
          requestHash: requestHash(fields),
        };
  if (keyed) {
    const stored = await findStoredResponse(db, keyed);
    if (stored) return { response: stored, replayed: true };
  }
  const captcha = await checkCaptcha(form, fields, client.ip, intake.captcha);
  const submission = buildSubmission(form, fields, captcha, client, country, new Date());
  const response = acceptedResponse(form, submission.id, prefersHtml(request));
  if (!keyed) {
    await db.transaction((tx) => storeSubmission(tx, submission, form));
    return { response, replayed: false };
  }
  return respondOnce(db, keyed, async (tx) => {
    await storeSubmission(tx, submission, form);
    return response;
  });
}
