import type { FastifyInstance } from "fastify";
import { AppError } from "./errors.ts";

/**
 * `Expect: 100-continue` is served as Node does (a 100, then the request). Any other expectation
 * is one formdeck cannot meet: RFC 9110 answers it with 417, here with the spec's error body.
 */
export function registerExpectations(app: FastifyInstance) {
  // Node would otherwise answer a bare 417 itself, before the application sees the request.
  app.server.on("checkExpectation", (request, response) => app.routing(request, response));
  app.addHook("onRequest", (request, _reply, done) => {
    const expect = request.headers.expect;
    // Node's own reading of the header, which has already sent the 100 when it matches.
    if (expect !== undefined && !/(?:^|\W)100-continue(?:$|\W)/i.test(expect)) {
      done(new AppError("expectation_failed", "Expect: only 100-continue is supported"));
      return;
    }
    done();
  });
}
