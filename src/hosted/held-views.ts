import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import { requestIdOf } from "../http/request-id.ts";
import type { FormViewCache } from "./form-view-cache.ts";
import type { HostedPages } from "./hosted-pages.ts";

const FORM_PATH = "/f/";

/**
 * A plain view: no body nor expectation (a request with either takes the route, whose hooks
 * answer them), nothing after the form id (a query string or a longer path takes the route too).
 */
const isPlainView = (request: IncomingMessage) =>
  request.method === "GET" &&
  request.url?.startsWith(FORM_PATH) === true &&
  request.headers["content-length"] === undefined &&
  request.headers["transfer-encoding"] === undefined &&
  request.headers.expect === undefined;

/**
 * Answers the views of hosted forms that this instance holds in memory (FormViewCache) as the
 * HTTP server receives them, before Fastify routes them; every other request, and every view of a
 * form not held, goes on to Fastify's handler. Such a view is the answer the route `GET
 * /f/{formId}` gives, byte for byte but its nonce, token and request id
 * (`test/hosted/held-views.test.ts` compares them), without the route's hooks, which have nothing
 * to do for it: Fastify's routing and hooks were a third of a view's cost (docs/decisions.md,
 * "Views of held forms skip the router").
 *
 * Only while Fastify writes no line per request (its level above `info`): a view answered here
 * would be missing from the log. While the application closes, views take the route again, which
 * answers them with `Connection: close`.
 */
export function answerHeldViewsFirst(
  app: FastifyInstance,
  pages: HostedPages,
  forms: FormViewCache,
) {
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  const answer = (request: IncomingMessage, response: ServerResponse) => {
    if (closing || !isPlainView(request)) return false;
    const form = forms.held((request.url as string).slice(FORM_PATH.length));
    if (form?.type !== "hosted") return false;
    pages.writeForm(response, form, requestIdOf(request));
    return true;
  };
  const [route, ...others] = app.server.listeners("request");
  if (!route || others.length > 0) {
    throw new Error("answerHeldViewsFirst: expected Fastify's handler alone on the server");
  }
  app.server.removeListener("request", route as () => void);
  app.server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    if (!answer(request, response)) route.call(app.server, request, response);
  });
}
