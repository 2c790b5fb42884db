import type { FastifyRequest } from "fastify";

/** The quality the `Accept` header gives exactly `types` (no wildcards), 0 when it names none. */
function explicitQuality(accept: string, types: readonly string[]): number {
  let best = 0;
  // Bounded: Node already limits the size of all headers together.
  for (const entry of accept.split(",")) {
    const [type = "", ...params] = entry.split(";").map((part) => part.trim().toLowerCase());
    if (!types.includes(type)) continue;
    const q = params.find((param) => param.startsWith("q="));
    const quality = q ? Number(q.slice(2)) : 1;
    if (Number.isFinite(quality) && quality > best) best = Math.min(quality, 1);
  }
  return best;
}

const HTML_TYPES = ["text/html", "application/xhtml+xml"] as const;
const JSON_TYPES = ["application/json"] as const;

/**
 * Whether the client prefers HTML: it names text/html above application/json, as a browser posting
 * a form does (`text/html,…,*\/*;q=0.8`). `*\/*` alone (fetch, curl, servers) gets JSON.
 */
export function prefersHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (typeof accept !== "string") return false;
  const html = explicitQuality(accept, HTML_TYPES);
  return html > 0 && html > explicitQuality(accept, JSON_TYPES);
}
