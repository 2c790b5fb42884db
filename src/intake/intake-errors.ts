import type { FastifyRequest } from "fastify";
import type { AppError } from "../http/errors.ts";
import { errorPage } from "./intake-pages.ts";
import { prefersHtml } from "./negotiation.ts";

const TITLES: Partial<Record<AppError["code"], string>> = {
  not_found: "Form not found",
  form_closed: "This form is closed",
  forbidden: "Submission refused",
  captcha_failed: "Verification failed",
  rate_limit_exceeded: "Too many submissions",
  payload_too_large: "Submission too large",
  unsupported_media_type: "Submission not understood",
  unprocessable_entity: "Submission not accepted",
};

/**
 * The HTML page for an intake error, when the client prefers HTML (null: answer JSON). A closed
 * form shows its owner's closed message when `showCustomClosedMessage` is on.
 */
export function errorPageFor(request: FastifyRequest, error: AppError): string | null {
  if (!prefersHtml(request)) return null;
  const settings = request.intakeForm?.settings;
  if (error.code === "form_closed" && settings?.showCustomClosedMessage) {
    return errorPage(
      settings.closeMessageTitle || "This form is closed",
      settings.closeMessageDescription || error.message,
    );
  }
  const title = TITLES[error.code] ?? "Something went wrong";
  return errorPage(title, error.message);
}
