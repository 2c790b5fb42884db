import type { FastifyRequest } from "fastify";
import type { AppError } from "../http/errors.ts";
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

/** What an intake error page says; a closed form's page shows its owner's closed message. */
export interface ErrorPage {
  title: string;
  message: string;
  closed: boolean;
}

/** The page for an intake error, when the client prefers HTML (null: answer JSON). */
export function errorPageFor(request: FastifyRequest, error: AppError): ErrorPage | null {
  if (!prefersHtml(request)) return null;
  const title = TITLES[error.code] ?? "Something went wrong";
  return { title, message: error.message, closed: error.code === "form_closed" };
}
