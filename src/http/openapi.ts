import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { API_PREFIX } from "./api-prefix.ts";

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from what the
 * server validates and sends. It is served as JSON and as a reference page at /docs.
 */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "formdeck forms management API",
        version: "0.0.1",
        description:
          "List, create, read, update and delete the forms of the organization that owns the API key.",
      },
      servers: [{ url: "/" }],
      components: {
        securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "api-key" } },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}
