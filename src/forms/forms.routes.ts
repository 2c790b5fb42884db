import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { API_PREFIX } from "../http/api-prefix.ts";
import { apiOperation, LOCATION, REPLAYED, success, WITH_BODY } from "../http/api-responses.ts";
import {
  IdempotencyHeaders,
  idempotencyKeyOf,
  REPLAYED_HEADER,
  requestHash,
} from "../idempotency/idempotency-key.ts";
import { createFormOnce } from "./create-once.ts";
import { createExpensiveListGate, expensiveListLimits, ListBusyError } from "./expensive-lists.ts";
import { updateForm } from "./form-updates.ts";
import {
  CreateFormBody,
  Form,
  FormIdParams,
  FormList,
  ListFormsQuery,
  NoQuery,
  UpdateFormBody,
} from "./forms.schemas.ts";
import * as forms from "./forms.service.ts";

/**
 * Request bodies that "Try it out" sends as they are: valid on the free plan, so they succeed for
 * any organization (test/http/openapi-examples.test.ts sends each one).
 */
const CREATE_EXAMPLE = {
  name: "Contact us",
  emailsToNotify: ["team@example.com"],
  submissionStorageDuration: "90",
};
const UPDATE_EXAMPLE = { name: "Contact us (2027)", isClosed: true };

const list = apiOperation({
  operationId: "listForms",
  summary: "List forms",
  description:
    "The forms of the key's organization, a page at a time: newest first, or by submissions. A " +
    "search counts and pages through at most 10,000 matches (`meta.totalCapped`). Searches and " +
    "pages past the 200th form take turns per organization: one that waits more than a second " +
    "for its turn is answered 429 (503 when other organizations hold the turns), with " +
    "`Retry-After`.",
  tags: ["forms"],
  access: "read",
});
const create = apiOperation({
  operationId: "createForm",
  summary: "Create a form",
  description:
    "Creates a form in the key's organization and answers the whole record. With an " +
    "`Idempotency-Key` header, a retried request creates nothing: it is answered with the first " +
    "response, plus `Idempotent-Replayed: true`.",
  tags: ["forms"],
  access: "full",
});
const read = apiOperation({
  operationId: "getForm",
  summary: "Read a form",
  description: "The whole record of one form of the key's organization.",
  tags: ["forms"],
  access: "read",
});
const update = apiOperation({
  operationId: "updateForm",
  summary: "Update a form",
  description: "Changes only the members sent, and answers the whole record as it now is.",
  tags: ["forms"],
  access: "full",
});
const remove = apiOperation({
  operationId: "deleteForm",
  summary: "Delete a form",
  description: "Deletes a form of the key's organization; reading it afterwards answers 404.",
  tags: ["forms"],
  access: "full",
});

export const formsRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  const expensiveLists = createExpensiveListGate(expensiveListLimits(db));
  app.get(
    "/forms",
    {
      config: list.config,
      schema: {
        ...list.schema,
        querystring: ListFormsQuery,
        response: list.responses(
          { 200: success(FormList, "A page of forms.") },
          "unprocessable_entity",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      try {
        return await forms.listForms(db, expensiveLists, request.owner, request.query);
      } catch (error) {
        if (error instanceof ListBusyError) {
          reply.header("Retry-After", String(error.retryAfterSeconds));
        }
        throw error;
      }
    },
  );

  app.post(
    "/forms",
    {
      config: create.config,
      schema: {
        ...create.schema,
        headers: IdempotencyHeaders,
        querystring: NoQuery,
        body: { ...CreateFormBody, examples: [CREATE_EXAMPLE] },
        response: create.responses(
          { 201: success(Form, "Created.", { ...LOCATION, ...REPLAYED }) },
          ...WITH_BODY,
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      if (key === undefined) {
        const form = await forms.createForm(db, request.owner, request.body);
        return reply.code(201).header("Location", `${API_PREFIX}/forms/${form.id}`).send(form);
      }
      // Only a 201 is stored; a create that fails leaves its key free.
      const { response, replayed } = await createFormOnce(
        db,
        request.owner,
        request.body,
        {
          organizationId: request.owner.organizationId,
          key,
          requestHash: requestHash(request.body),
        },
        (form) => {
          // The text sent, serialized by the route's schema, is the text stored.
          const body = reply.code(201).serialize(form) as string;
          return { status: 201, location: `${API_PREFIX}/forms/${form.id}`, body };
        },
      );
      // The stored text is sent as it is: the route's typed reply only knows the record.
      const untyped = reply as FastifyReply;
      if (replayed) untyped.header(REPLAYED_HEADER, "true");
      return untyped
        .code(response.status)
        .header("Location", response.location)
        .type("application/json; charset=utf-8")
        .send(response.body);
    },
  );

  app.get(
    "/forms/:formId",
    {
      config: read.config,
      schema: {
        ...read.schema,
        querystring: NoQuery,
        params: FormIdParams,
        response: read.responses(
          { 200: success(Form, "The form.") },
          "unprocessable_entity",
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) => forms.getForm(db, request.owner, request.params.formId),
  );

  app.patch(
    "/forms/:formId",
    {
      config: update.config,
      schema: {
        ...update.schema,
        querystring: NoQuery,
        params: FormIdParams,
        body: { ...UpdateFormBody, examples: [UPDATE_EXAMPLE] },
        response: update.responses(
          { 200: success(Form, "The form as updated.") },
          ...WITH_BODY,
          "not_found",
          "service_unavailable",
        ),
      },
    },
    (request) => updateForm(db, request.owner, request.params.formId, request.body),
  );

  app.delete(
    "/forms/:formId",
    {
      config: remove.config,
      schema: {
        ...remove.schema,
        querystring: NoQuery,
        params: FormIdParams,
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
      await forms.deleteForm(db, request.owner, request.params.formId);
      return reply.code(204).send(null);
    },
  );
};
