import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import type { FileLinks } from "../files/file-links.ts";
import { FormIdParams, NoQuery } from "../forms/forms.schemas.ts";
import { apiOperation, success, WITH_BODY } from "../http/api-responses.ts";
import type { PendingEvents } from "../notifications/event-relay.ts";
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

const TENANT_RULE =
  "A form or submission of another organization answers the same 404 as a missing one.";

const list = apiOperation({
  operationId: "listSubmissions",
  summary: "List a form's submissions",
  description:
    "Newest first, id as tie-breaker. `isSpam` picks the inbox (default) or spam; " +
    "`search`, `since` and `until` narrow either. `meta.total` counts what the filters " +
    "match; `meta.totalInbox` and `meta.totalSpam` count what they match in the inbox and " +
    `in spam, whatever isSpam is. ${TENANT_RULE}`,
  tags: ["submissions"],
  access: "read",
});
const exportAll = apiOperation({
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
  tags: ["submissions"],
  access: "read",
});
const read = apiOperation({
  operationId: "getSubmission",
  summary: "Read a submission",
  description: TENANT_RULE,
  tags: ["submissions"],
  access: "read",
});
const update = apiOperation({
  operationId: "updateSubmission",
  summary: "Mark a submission as spam or not spam",
  description:
    "Marking spam sets `spamReason` to `manual` and takes one off the form's " +
    "`submissions` count; marking not spam clears the reason and adds one back. Asking " +
    `for the state it is already in changes nothing. ${TENANT_RULE}`,
  tags: ["submissions"],
  access: "full",
});
const remove = apiOperation({
  operationId: "deleteSubmission",
  summary: "Delete a submission",
  description:
    "The form's `submissions` count is unchanged: it counts every accepted submission. " +
    TENANT_RULE,
  tags: ["submissions"],
  access: "full",
});

/** The export's answer: a stream of text, CSV or NDJSON, as an attachment. */
const EXPORTED = {
  description: "The export, streamed",
  headers: {
    "Content-Disposition": {
      type: "string" as const,
      description: 'attachment; filename="<formId>-submissions.<csv|ndjson>"',
      required: true,
    },
  },
  content: {
    "text/csv": { schema: { type: "string" } },
    "application/x-ndjson": { schema: { type: "string" } },
  },
};

export const submissionsRoutes: FastifyPluginAsyncTypebox<{
  db: Database;
  links: FileLinks;
  /** Relays the form's pending submission events: a deleted submission's emails go with it. */
  pending: PendingEvents;
}> = async (app, { db, links, pending }) => {
  app.get(
    "/forms/:formId/submissions",
    {
      config: list.config,
      schema: {
        ...list.schema,
        params: FormIdParams,
        querystring: ListSubmissionsQuery,
        response: list.responses(
          { 200: success(SubmissionList, "A page of submissions.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) =>
      submissions.listSubmissions(db, links, request.owner, request.params.formId, request.query),
  );

  app.get(
    "/forms/:formId/submissions/export",
    {
      // Fastify's automatic HEAD would run the whole export only to throw the body away.
      exposeHeadRoute: false,
      config: exportAll.config,
      schema: {
        ...exportAll.schema,
        params: FormIdParams,
        querystring: ExportSubmissionsQuery,
        response: exportAll.responses(
          { 200: EXPORTED },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const exported = await exportSubmissions(
        db,
        links,
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
      config: read.config,
      schema: {
        ...read.schema,
        params: SubmissionIdParams,
        querystring: NoQuery,
        response: read.responses(
          { 200: success(Submission, "The submission.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) =>
      submissions.getSubmission(
        db,
        links,
        request.owner,
        request.params.formId,
        request.params.submissionId,
      ),
  );

  app.patch(
    "/forms/:formId/submissions/:submissionId",
    {
      config: update.config,
      schema: {
        ...update.schema,
        params: SubmissionIdParams,
        querystring: NoQuery,
        body: UpdateSubmissionBody,
        response: update.responses(
          { 200: success(Submission, "The submission as updated.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) =>
      submissions.updateSubmission(
        db,
        links,
        request.owner,
        request.params.formId,
        request.params.submissionId,
        request.body,
      ),
  );

  app.delete(
    "/forms/:formId/submissions/:submissionId",
    {
      config: remove.config,
      schema: {
        ...remove.schema,
        params: SubmissionIdParams,
        querystring: NoQuery,
        // A DELETE may carry a body, which is read (and refused) like any other.
        response: remove.responses(
          { 204: success(Type.Null(), "Deleted.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      await pending.relayForm(request.params.formId);
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
