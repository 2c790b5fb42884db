import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { API_PREFIX } from "../http/api-prefix.ts";
import { errorResponses } from "../http/errors.ts";
import { respondOnce } from "../idempotency/idempotency.service.ts";
import {
  IdempotencyHeaders,
  idempotencyKeyOf,
  REPLAYED_HEADER,
  requestHash,
} from "../idempotency/idempotency-key.ts";
import { createExpensiveListGate, expensiveListLimits, ListBusyError } from "./expensive-lists.ts";
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

const keyed = ["unauthorized", "forbidden", "rate_limit_exceeded"] as const;
const withBody = ["payload_too_large", "unsupported_media_type"] as const;
const security = [{ apiKey: [] }];

export const formsRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  const expensiveLists = createExpensiveListGate(expensiveListLimits(db));
  app.get(
    "/forms",
    {
      config: { scope: "read" },
      schema: {
        summary: "List forms",
        description:
          "Forms of the key's organization, newest first or by submissions. A search counts and " +
          "pages through at most 10,000 matches (`meta.totalCapped`). Searches and pages past the " +
          "200th form take turns per organization: one that waits more than a second for its turn " +
          "is answered 429 (503 when other organizations hold the turns), with `Retry-After`.",
        tags: ["forms"],
        security,
        querystring: ListFormsQuery,
        response: { 200: FormList, ...errorResponses(...keyed, "unprocessable_entity") },
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
      config: { scope: "full" },
      schema: {
        summary: "Create a form",
        description:
          "With an `Idempotency-Key` header, a retried request creates nothing: it is answered " +
          "with the first response, plus `Idempotent-Replayed: true`.",
        tags: ["forms"],
        security,
        headers: IdempotencyHeaders,
        querystring: NoQuery,
        body: CreateFormBody,
        response: { 201: Form, ...errorResponses(...keyed, ...withBody, "unprocessable_entity") },
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      if (key === undefined) {
        const form = await forms.createForm(db, request.owner, request.body);
        return reply.code(201).header("Location", `${API_PREFIX}/forms/${form.id}`).send(form);
      }
      // Only a 201 is stored; a create that fails rolls its key back with it.
      const { response, replayed } = await respondOnce(
        db,
        {
          organizationId: request.owner.organizationId,
          key,
          requestHash: requestHash(request.body),
        },
        async (tx) => {
          const form = await forms.createForm(tx, request.owner, request.body);
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
      config: { scope: "read" },
      schema: {
        summary: "Read a form",
        tags: ["forms"],
        security,
        querystring: NoQuery,
        params: FormIdParams,
        response: { 200: Form, ...errorResponses(...keyed, "unprocessable_entity", "not_found") },
      },
    },
    (request) => forms.getForm(db, request.owner, request.params.formId),
  );

  app.patch(
    "/forms/:formId",
    {
      config: { scope: "full" },
      schema: {
        summary: "Update a form",
        description: "Changes only the members sent.",
        tags: ["forms"],
        security,
        querystring: NoQuery,
        params: FormIdParams,
        body: UpdateFormBody,
        response: {
          200: Form,
          ...errorResponses(...keyed, ...withBody, "unprocessable_entity", "not_found"),
        },
      },
    },
    (request) => forms.updateForm(db, request.owner, request.params.formId, request.body),
  );

  app.delete(
    "/forms/:formId",
    {
      config: { scope: "full" },
      schema: {
        summary: "Delete a form",
        tags: ["forms"],
        security,
        querystring: NoQuery,
        params: FormIdParams,
        response: {
          204: Type.Null({ description: "Deleted" }),
          ...errorResponses(...keyed, "unprocessable_entity", "not_found"),
        },
      },
    },
    async (request, reply) => {
      await forms.deleteForm(db, request.owner, request.params.formId);
      return reply.code(204).send(null);
    },
  );
};
