import type { FastifyReply, FastifyRequest } from "fastify";
import pino from "pino";

/**
 * JSON lines on stdout. Requests are logged by method, path and status only: never headers,
 * bodies or query strings, which is where keys and captcha secrets travel. The redaction is a
 * second line of defence for anything that logs a whole request object by mistake.
 */
export function createLogger(level: string) {
  return pino({
    level,
    redact: {
      paths: [
        "req.headers",
        "headers",
        "*.headers",
        "body",
        "*.body",
        "providerCaptchaSecretKey",
        "*.key",
      ],
      censor: "[redacted]",
    },
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        path: request.url.split("?")[0],
        remoteAddress: request.ip,
      }),
      res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
      err: pino.stdSerializers.err,
    },
  });
}

export type Logger = ReturnType<typeof createLogger>;
