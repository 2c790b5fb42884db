import { Type } from "typebox";
import { apiOperation } from "../http/api-responses.ts";

/** The intake's routes as the OpenAPI document describes them. */

export const FormIdParams = Type.Object({ formId: Type.String({ description: "Form id" }) });

export const SubmissionBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    "The form's fields by name: urlencoded or multipart (a repeated name becomes an array of " +
    "strings) or a JSON object (values stored as sent). Not stored: the honeypot field and the " +
    "captcha token fields. Multipart bodies may carry files: at most UPLOAD_MAX_FILES (10) of " +
    "UPLOAD_MAX_FILE_BYTES (10 MB) each and UPLOAD_MAX_TOTAL_BYTES (25 MB) in all (413 naming " +
    "the field past them), of a type detected from their content: png, jpeg, gif, webp, avif, " +
    "heic, svg, pdf, plain text, csv, doc, docx, xls, xlsx (422 `<field>: file type not " +
    "allowed` otherwise). Images over 100 megapixels are refused (422); those of a type the " +
    "form lists in imageCompressionType are re-encoded without their metadata.",
  examples: [{ email: "ada@example.com", message: "Hello" }],
});

export const Accepted = Type.Object({
  ok: Type.Literal(true),
  id: Type.String({ description: "The submission's id, sub_…" }),
});

export const submit = apiOperation({
  operationId: "submitForm",
  summary: "Submit a form",
  description:
    "Public: no api-key. Browsers post here from any page (an HTML form's action, or fetch), " +
    "servers directly. Checks, in order: per address and form rate limit (429), the form " +
    "exists (404), is open (403 form_closed), the address is not blacklisted and the country " +
    "allowed (403 forbidden), the body (413, 415, 422; 503 while the server holds too many " +
    "uploads), the captcha (403 captcha_failed). A " +
    "filled honeypot or a page outside allowedDomains is kept as spam and answered as a " +
    "success. A client whose Accept prefers text/html gets a 303 to the thank-you page (or " +
    "the form's custom redirect) and HTML error pages; every other client gets JSON.",
  tags: ["intake"],
  access: "public",
  htmlErrors: true,
});
export const preflight = apiOperation({
  operationId: "preflightSubmitForm",
  summary: "CORS preflight of a submission",
  description:
    "Access-Control-Allow-Origin is the request's Origin when the form's allowedDomains is " +
    "empty or allows it; no CORS headers otherwise.",
  tags: ["intake"],
  access: "public",
});
