import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Database } from "../../db/database.ts";
import type { FileLinks } from "../../files/file-links.ts";
import { NoQuery } from "../../forms/forms.schemas.ts";
import { apiOperation, success } from "../../http/api-responses.ts";
import { SubmissionIdParams } from "../../submissions/submissions.schemas.ts";
import { getSubmission } from "../../submissions/submissions.service.ts";
import type { PendingEvents } from "../event-relay.ts";
import { listEmailRecords } from "./email-records.repository.ts";

const EmailRecord = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal("owner"), Type.Literal("respondent")], {
    description: "The owner notification or the respondent's autoresponse",
  }),
  to: Type.String({ description: "The recipients, separated by `, `" }),
  subject: Type.String(),
  status: Type.Union(
    [
      Type.Literal("pending"),
      Type.Literal("sent"),
      Type.Literal("failed"),
      Type.Literal("skipped"),
    ],
    {
      description:
        "`pending` until sent or given up; `skipped`: never sent (no SMTP server configured, or " +
        "the autoresponder's cap of 5 an hour per address: lastError `rate limited`)",
    },
  ),
  attempts: Type.Integer({ description: "Attempts made so far" }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: "The last failure, or the recipients a sent email was refused for; else null",
  }),
  createdAt: Type.String({ format: "date-time" }),
});

const EmailList = Type.Object({ data: Type.Array(EmailRecord) });

const list = apiOperation({
  operationId: "listSubmissionEmails",
  summary: "List a submission's emails",
  description:
    "The owner notification and the autoresponse the submission caused, oldest first, with " +
    "their delivery state. Temporary failures (connection, timeout, SMTP 4xx) are retried " +
    "5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each other (8 attempts); an SMTP 5xx " +
    "fails at once. Deleted with the submission. A form or submission of another " +
    "organization answers the same 404 as a missing one.",
  tags: ["submissions"],
  access: "read",
});

export const emailsRoutes: FastifyPluginAsyncTypebox<{
  db: Database;
  links: FileLinks;
  /** Relays the form's pending submission events, so that every email is there to read. */
  pending: PendingEvents;
}> = async (app, { db, links, pending }) => {
  app.get(
    "/forms/:formId/submissions/:submissionId/emails",
    {
      config: list.config,
      schema: {
        ...list.schema,
        params: SubmissionIdParams,
        querystring: NoQuery,
        response: list.responses(
          { 200: success(EmailList, "The submission's emails.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request) => {
      const { formId, submissionId } = request.params;
      // The tenant rule and the 404s are the submission's own.
      await getSubmission(db, links, request.owner, formId, submissionId);
      await pending.relayForm(formId);
      const rows = await listEmailRecords(db, formId, submissionId);
      return { data: rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString() })) };
    },
  );
};
