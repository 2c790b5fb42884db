import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { API_PREFIX } from "./api-prefix.ts";
import { PACKAGE_VERSION } from "./package-version.ts";

type Header = { schema?: Record<string, unknown>; required?: boolean };
type Operation = { responses?: Record<string, { headers?: Record<string, Header> }> };

/**
 * Route schemas say whether a response header is always sent as `required: true` beside its type
 * (api-responses.ts); in the document that flag belongs to the Header Object, not to its schema.
 */
function liftHeaderRequired(document: Record<string, unknown>) {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const operation of Object.values(paths).flatMap((item) => Object.values(item))) {
    for (const response of Object.values(operation.responses ?? {})) {
      for (const header of Object.values(response.headers ?? {})) {
        if (header.schema?.required === true) header.required = true;
        delete header.schema?.required;
      }
    }
  }
  return document;
}

/** formdeck's own mark for the docs page, in place of the framework's. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#030712"/><path d="M10 8h13v4h-9v4h7v4h-7v6h-4z" fill="#fff"/></svg>`;

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from what the
 * server validates and sends. It is served as JSON and as a reference page at /docs.
 */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "formdeck API",
        // The package's version: the document describes this release of the server.
        version: PACKAGE_VERSION,
        description:
          "Manage the forms of the organization that owns the API key, and read, sort and export " +
          "their submissions; forms receive submissions at the public `POST /f/{formId}`. Every " +
          "error has the body `{error: {code, message}}`; every answer carries `X-Request-Id`.",
        license: { name: "MIT", identifier: "MIT" },
      },
      servers: [{ url: "/" }],
      tags: [
        { name: "forms", description: "The forms of the key's organization." },
        {
          name: "submissions",
          description: "What a form received: read, mark as spam, delete, export.",
        },
        {
          name: "webhooks",
          description:
            "Signed HTTP notifications of a form's events, their delivery log and redelivery.",
        },
        {
          name: "intake",
          description: "Public: where browsers and servers send submissions, and the pages after.",
        },
        {
          name: "pages",
          description:
            "Public: the pages of hosted forms (form, thank-you, closed, 404) and their assets.",
        },
        { name: "health", description: "Probes for a process manager or a load balancer." },
        { name: "discovery", description: "Where to start: links to this document and its page." },
      ],
      components: {
        securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "api-key" } },
      },
    },
    transformObject: (generated) =>
      "openapiObject" in generated
        ? liftHeaderRequired(generated.openapiObject as Record<string, unknown>)
        : generated.swaggerObject,
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    // No top bar: it only carries the framework's logo and a box to load other documents.
    uiConfig: { layout: "BaseLayout" },
    // The plugin would use the framework's logo by default; ours (shown only by the top bar layout).
    logo: { type: "image/svg+xml", content: Buffer.from(FAVICON) },
    theme: {
      title: "formdeck API",
      favicon: [
        {
          filename: "favicon.svg",
          rel: "icon",
          sizes: "any",
          type: "image/svg+xml",
          content: Buffer.from(FAVICON),
        },
      ],
    },
  });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}
