import type { FastifyPluginAsync } from "fastify";
import { type TSchema, Type } from "typebox";
import { API_PREFIX } from "../http/api-prefix.ts";
import { apiOperation } from "../http/api-responses.ts";
import { PACKAGE_VERSION } from "../http/package-version.ts";

const LINKS = {
  docs: "/docs",
  openapi: `${API_PREFIX}/openapi.json`,
  forms: `${API_PREFIX}/forms`,
  health: "/healthz",
};

const HOME = {
  name: "formdeck",
  version: PACKAGE_VERSION,
  description: "A self-hostable forms service. Every /api/v1 operation needs an `api-key` header.",
  links: LINKS,
};

const Home = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  links: Type.Object(
    {
      docs: Type.String({ description: "The API reference, for a browser" }),
      openapi: Type.String({ description: "The OpenAPI 3.1 document" }),
      forms: Type.String({ description: "The forms collection (needs an api-key)" }),
      health: Type.String({ description: "Liveness" }),
    },
    { description: "Paths on this server" },
  ),
});

const HOME_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>formdeck</title></head>
<body>
<h1>formdeck ${PACKAGE_VERSION}</h1>
<p>A self-hostable forms service. Every <code>${API_PREFIX}</code> operation needs an <code>api-key</code> header.</p>
<ul>
<li><a href="${LINKS.docs}">API reference</a></li>
<li><a href="${LINKS.openapi}">OpenAPI document</a></li>
</ul>
</body>
</html>
`;

/** The media ranges of an Accept header with their weights, `q` defaulting to 1. */
function weights(accept: string): { range: string; q: number }[] {
  return accept.split(",").map((part) => {
    const [range = "", ...parameters] = part.split(";").map((p) => p.trim().toLowerCase());
    const q = parameters.find((p) => p.startsWith("q="));
    return { range, q: q ? Number(q.slice(2)) || 0 : 1 };
  });
}

/** The weight an Accept header gives to a media type, through its most specific matching range. */
function weightOf(accept: { range: string; q: number }[], type: string): number {
  const [major] = type.split("/");
  for (const candidate of [type, `${major}/*`, "*/*"]) {
    const match = accept.find((entry) => entry.range === candidate);
    if (match) return match.q;
  }
  return 0;
}

/** A browser (which asks for HTML first) gets a page; everyone else, curl included, gets JSON. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const parsed = weights(accept);
  return weightOf(parsed, "text/html") > weightOf(parsed, "application/json");
}

const operations = {
  "/": apiOperation({
    operationId: "getHome",
    summary: "Where to start",
    description:
      "Links to the API reference and the OpenAPI document: JSON, or a small HTML page for a " +
      "browser (`Accept: text/html`). Needs no key and spends no quota.",
    tags: ["discovery"],
    access: "public",
  }),
  [API_PREFIX]: apiOperation({
    operationId: "getApiRoot",
    summary: "Where to start with version 1",
    description:
      "The same answer as `/`: links to the API reference and the OpenAPI document. Needs no key " +
      "and spends no quota.",
    tags: ["discovery"],
    access: "public",
  }),
};

export const homeRoutes: FastifyPluginAsync = async (app) => {
  for (const [path, operation] of Object.entries(operations)) {
    const ok = {
      description: "Links to the documentation.",
      content: {
        "application/json": { schema: Home, example: HOME },
        "text/html": { schema: Type.String(), example: HOME_HTML },
      },
    } as unknown as TSchema;
    app.get(
      path,
      { schema: { ...operation.schema, response: operation.responses({ 200: ok }) } },
      async (request, reply) => {
        if (prefersHtml(request.headers.accept)) {
          return reply.type("text/html; charset=utf-8").send(HOME_HTML);
        }
        return reply.type("application/json; charset=utf-8").send(HOME);
      },
    );
  }
};
