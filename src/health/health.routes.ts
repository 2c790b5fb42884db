import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Database } from "../db/database.ts";
import { AppError, errorResponses } from "../http/errors.ts";

const Status = Type.Object({ status: Type.String() });

export const healthRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness: the process answers",
        tags: ["operations"],
        response: { 200: Status },
      },
    },
    async () => ({ status: "ok" }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness: the store answers",
        tags: ["operations"],
        response: { 200: Status, ...errorResponses("service_unavailable") },
      },
    },
    async () => {
      try {
        await db.query("SELECT 1");
      } catch {
        throw new AppError("service_unavailable", "store: is not reachable");
      }
      return { status: "ready" };
    },
  );
};
