import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { FormIdParams, NoQuery } from "../forms/forms.schemas.ts";
import { errorResponses } from "../http/errors.ts";
import { exportSubmissions } from "./submission-export.ts";
import {
  ExportSubmissionsQuery,
  ListSubmissionsQuery,
  Submission,
  SubmissionIdParams,
  SubmissionList,
  UpdateSubmissionBody,
} from "./submissions.schemas.ts";
import * as submissions from "./submissions.service.ts";

const keyed = ["unauthorized", "forbidden", "rate_limit_exceeded"] as const;
const withBody = ["payload_too_large", "unsupported_media_type"] as const;
const security = [{ apiKey: [] }];
const tags = ["submissions"];

const TENANT_RULE =
  "A form or submission of another organization answers the same 404 as a missing one.";

export const submissionsRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (
  app,
  { db },
) => {
  app.get(
    "/forms/:formId/submissions",
    {
      config: { scope: "read" },
      schema: {
        operationId: "listSubmissions",
        summary: "List a form's submissions",
        description:
          "Newest first, id as tie-breaker. `isSpam` picks the inbox (default) or spam; " +
          "`search`, `since` and `until` narrow either. `meta.total` counts what the filters " +
          "match; `meta.totalInbox` and `meta.totalSpam` count what they match in the inbox and " +
          `in spam, whatever isSpam is. ${TENANT_RULE}`,
        tags,
        security,
        params: FormIdParams,
        querystring: ListSubmissionsQuery,
        response: {
          200: SubmissionList,
          ...errorResponses(...keyed, "unprocessable_entity", "not_found"),
        },
      },
    },
    (request) =>
      submissions.listSubmissions(db, request.owner, request.params.formId, request.query),
  );

  app.get(
    "/forms/:formId/submissions/export",
    {
      config: { scope: "read" },
      schema: {
        operationId: "exportSubmissions",
        summary: "Export a form's submissions",
        description:
          "Every submission the filters select (the list's filters, without pages), newest " +
          "first, streamed as an attachment named `<formId>-submissions.<csv|ndjson>`. CSV " +
          "(default): RFC 4180, CRLF, UTF-8 with a byte order mark; columns `id`, `createdAt`, " +
          "`isSpam`, one per answer id in order of first appearance (oldest submission first), " +
          "then `files`; a cell starting with `=`, `+`, `-`, `@`, tab or carriage return is " +
          "prefixed with `'`. NDJSON: one submission per line, as the API returns it. " +
          TENANT_RULE,
        tags,
        security,
        params: FormIdParams,
        querystring: ExportSubmissionsQuery,
        response: {
          200: {
            description: "The export, streamed",
            headers: {
              "Content-Disposition": {
                type: "string",
                description: 'attachment; filename="<formId>-submissions.<csv|ndjson>"',
              },
            },
            content: {
              "text/csv": { schema: { type: "string" } },
              "application/x-ndjson": { schema: { type: "string" } },
            },
          },
          ...errorResponses(...keyed, "unprocessable_entity", "not_found"),
        },
      },
    },
    async (request, reply) => {
      const exported = await exportSubmissions(
        db,
        request.owner,
        request.params.formId,
        request.query,
      );
      // The typed reply knows the documented text; the body is a stream of it.
      return (reply as FastifyReply)
        .header("Content-Disposition", `attachment; filename="${exported.filename}"`)
        .header("X-Content-Type-Options", "nosniff")
        .type(exported.contentType)
        .send(exported.body);
    },
  );

  app.get(
    "/forms/:formId/submissions/:submissionId",
    {
      config: { scope: "read" },
      schema: {
        operationId: "getSubmission",
        summary: "Read a submission",
        description: TENANT_RULE,
        tags,
        security,
        params: SubmissionIdParams,
        querystring: NoQuery,
        response: {
          200: Submission,
          ...errorResponses(...keyed, "unprocessable_entity", "not_found"),
        },
      },
    },
    (request) =>
      submissions.getSubmission(
        db,
        request.owner,
        request.params.formId,
        request.params.submissionId,
      ),
  );

  app.patch(
    "/forms/:formId/submissions/:submissionId",
    {
      config: { scope: "full" },
      schema: {
        operationId: "updateSubmission",
        summary: "Mark a submission as spam or not spam",
        description:
          "Marking spam sets `spamReason` to `manual` and takes one off the form's " +
          "`submissions` count; marking not spam clears the reason and adds one back. Asking " +
          `for the state it is already in changes nothing. ${TENANT_RULE}`,
        tags,
        security,
        params: SubmissionIdParams,
        querystring: NoQuery,
        body: UpdateSubmissionBody,
        response: {
          200: Submission,
          ...errorResponses(...keyed, ...withBody, "unprocessable_entity", "not_found"),
        },
      },
    },
    (request) =>
      submissions.updateSubmission(
        db,
        request.owner,
        request.params.formId,
        request.params.submissionId,
        request.body,
      ),
  );

  app.delete(
    "/forms/:formId/submissions/:submissionId",
    {
      config: { scope: "full" },
      schema: {
        operationId: "deleteSubmission",
        summary: "Delete a submission",
        description:
          "The form's `submissions` count is unchanged: it counts every accepted submission. " +
          TENANT_RULE,
        tags,
        security,
        params: SubmissionIdParams,
        querystring: NoQuery,
        response: {
          204: Type.Null({ description: "Deleted" }),
          ...errorResponses(...keyed, "unprocessable_entity", "not_found"),
        },
      },
    },
    async (request, reply) => {
      await submissions.deleteSubmission(
        db,
        request.owner,
        request.params.formId,
        request.params.submissionId,
      );
      return reply.code(204).send(null);
    },
  );
};
