import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { apiOperation, success } from "../http/api-responses.ts";
import { AppError } from "../http/errors.ts";

const Status = (status: string) =>
  Type.Object({ status: Type.String({ enum: [status] }) }, { examples: [{ status }] });

const liveness = apiOperation({
  operationId: "getLiveness",
  summary: "Liveness: the process answers",
  description: "Answers as long as the process serves requests; touches neither store nor limiter.",
  tags: ["health"],
  access: "public",
});
const readiness = apiOperation({
  operationId: "getReadiness",
  summary: "Readiness: the store answers",
  description: "Answers 200 when the store answers a query, else 503: route traffic elsewhere.",
  tags: ["health"],
  access: "public",
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    "/healthz",
    {
      schema: {
        ...liveness.schema,
        response: liveness.responses({ 200: success(Status("ok"), "The process is alive.") }),
      },
    },
    async () => ({ status: "ok" }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        ...readiness.schema,
        response: readiness.responses(
          { 200: success(Status("ready"), "The store answers.") },
          "service_unavailable",
        ),
      },
    },
    async (_request, reply) => {
      try {
        await db.query("SELECT 1");
      } catch {
        // As every 503 does: a balancer or a client may try again shortly.
        reply.header("Retry-After", "1");
        throw new AppError("service_unavailable", "store: is not reachable");
      }
      return { status: "ready" };
    },
  );
};
