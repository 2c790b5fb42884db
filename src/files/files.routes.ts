import { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { NoQuery } from "../forms/forms.schemas.ts";
import { apiOperation } from "../http/api-responses.ts";
import { AppError, formNotFound } from "../http/errors.ts";
import { submissionNotFound } from "../submissions/submissions.service.ts";
import { attachmentDisposition } from "./content-disposition.ts";
import type { FileLinks } from "./file-links.ts";
import { ACCEPTED_TYPES } from "./file-types.ts";
import {
  FileGone,
  fileSlices,
  findFile,
  findSubmissionFile,
  type StoredFile,
} from "./files.repository.ts";

const FORM_ID = /^form_[A-Za-z0-9_-]{22}$/;
const SUBMISSION_ID = /^sub_[A-Za-z0-9_-]{22}$/;
const FILE_ID = /^file_[A-Za-z0-9_-]{22}$/;

const fileNotFound = () => new AppError("not_found", "file: not found");

const SERVED_AS =
  "Always as an attachment (`Content-Disposition` with the cleaned name, RFC 6266 `filename*`), " +
  "with the type detected at upload, `X-Content-Type-Options: nosniff` and " +
  "`Content-Security-Policy: sandbox`: a browser never renders it as a page of this site.";

const download = apiOperation({
  operationId: "downloadSubmissionFile",
  summary: "Download a file of a submission",
  description: `${SERVED_AS} A form, submission or file of another organization answers the same 404 as a missing one.`,
  tags: ["submissions"],
  access: "read",
});
const signedDownload = apiOperation({
  operationId: "downloadFileByLink",
  summary: "Download a file through its signed link",
  description:
    "The link a submission's `files[].url` gives: no key needed, valid for 7 days. A " +
    `signature that does not match, or a link past its \`expires\`, is refused with 403. ${SERVED_AS}`,
  tags: ["submissions"],
  access: "public",
});

/** The file's bytes, as one of the types uploads may have. */
const FILE = {
  description: "The file",
  headers: {
    "Content-Disposition": {
      type: "string" as const,
      description: "attachment; filename=\"<ASCII name>\"; filename*=UTF-8''<name>",
      required: true,
    },
    "Content-Security-Policy": {
      type: "string" as const,
      enum: ["sandbox"],
      description: "The file runs no script and reaches nothing, even if opened.",
      required: true,
    },
  },
  content: Object.fromEntries(
    Object.values(ACCEPTED_TYPES).map((type) => [
      type,
      { schema: { type: "string", format: "binary" } },
    ]),
  ),
};

const FileParams = Type.Object({
  formId: Type.String({ description: "Form id" }),
  submissionId: Type.String({ description: "Submission id" }),
  fileId: Type.String({ description: "File id, from the submission's `files`" }),
});

const LinkParams = Type.Object({ fileId: Type.String({ description: "File id" }) });
const LinkQuery = Type.Object(
  {
    expires: Type.String({ description: "Unix time, in seconds, after which the link fails" }),
    signature: Type.String({ description: "The link's signature" }),
  },
  { additionalProperties: false },
);

/**
 * Streams the file a slice at a time, so that serving it holds one slice in memory. Its first
 * slice is read before the answer starts: a store that cannot be read is then the usual 503, not
 * a broken download.
 */
async function sendFile(reply: FastifyReply, db: Database, file: StoredFile) {
  const slices = fileSlices(db, file);
  // Deleted between its lookup and its first slice: as missing as if it had gone before.
  const first = await slices.next().catch((error: unknown) => {
    throw error instanceof FileGone ? fileNotFound() : error;
  });
  const body = Readable.from(
    (async function* () {
      if (!first.done) yield first.value;
      yield* slices;
    })(),
    // One slice waits while another is sent, not sixteen (what an object stream reads ahead).
    { objectMode: true, highWaterMark: 1 },
  );
  const textual = file.type.startsWith("text/") || file.type === ACCEPTED_TYPES.svg;
  return reply
    .header("Content-Disposition", attachmentDisposition(file.name))
    .header("Content-Security-Policy", "sandbox")
    .header("Cache-Control", "private, no-store")
    .header("Content-Length", file.size)
    .type(textual ? `${file.type}; charset=utf-8` : file.type)
    .send(body);
}

export const fileRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    "/forms/:formId/submissions/:submissionId/files/:fileId",
    {
      exposeHeadRoute: false,
      config: download.config,
      schema: {
        ...download.schema,
        params: FileParams,
        querystring: NoQuery,
        response: download.responses(
          { 200: FILE },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const { formId, submissionId, fileId } = request.params;
      if (!FORM_ID.test(formId)) throw formNotFound();
      if (!SUBMISSION_ID.test(submissionId)) throw submissionNotFound();
      if (!FILE_ID.test(fileId)) throw fileNotFound();
      const found = await findSubmissionFile(
        db,
        request.owner.organizationId,
        formId,
        submissionId,
        fileId,
      );
      if (found === "form") throw formNotFound();
      if (found === "submission") throw submissionNotFound();
      if (found === "file") throw fileNotFound();
      return sendFile(reply as FastifyReply, db, found);
    },
  );
};

/** The signed links, outside the API's prefix: they are given to people without a key. */
export const fileLinkRoutes: FastifyPluginAsyncTypebox<{ db: Database; links: FileLinks }> = async (
  app,
  { db, links },
) => {
  app.get(
    "/files/:fileId",
    {
      exposeHeadRoute: false,
      schema: {
        ...signedDownload.schema,
        params: LinkParams,
        querystring: LinkQuery,
        response: signedDownload.responses(
          { 200: FILE },
          "forbidden",
          "not_found",
          "unprocessable_entity",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const { fileId } = request.params;
      await links.verify(fileId, request.query.expires, request.query.signature);
      // A valid signature was made for an id of ours: the file may since have been deleted.
      const file = FILE_ID.test(fileId) ? await findFile(db, fileId) : null;
      if (!file) throw fileNotFound();
      return sendFile(reply as FastifyReply, db, file);
    },
  );
};
