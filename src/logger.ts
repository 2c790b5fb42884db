import type { FastifyReply, FastifyRequest } from "fastify";
import pg from "pg";
import pino from "pino";
import type { Config } from "./config.ts";

/**
 * JSON lines on stdout. Requests are logged by method, path and status only: never headers,
 * bodies or query strings, which is where keys and captcha secrets travel. The redaction is a
 * second line of defence for anything that logs a whole request object by mistake.
 */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino(
    {
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
          // A URL that does not parse is kept in the error, password and all.
          "err.input",
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
    },
    destination,
  );
}

export type Logger = ReturnType<typeof createLogger>;

/** A backend as the start log shows it: fields for machines, text for people. */
interface Described {
  fields: Record<string, unknown>;
  text: string;
}

const hostPort = (host: string, port: number) =>
  host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;

function describeStore({
  databaseUrl,
  dataDir,
}: Pick<Config, "databaseUrl" | "dataDir">): Described {
  if (!databaseUrl) {
    return { fields: { type: "embedded", dataDir }, text: `embedded PGlite in ${dataDir}` };
  }
  try {
    // pg resolves the URL as it will connect: its defaults, PG* variables, ?host= for a socket.
    const { host, port, database } = new pg.Client({ connectionString: databaseUrl });
    return {
      fields: { type: "postgresql", host, port, database: database ?? null },
      text: `PostgreSQL at ${hostPort(host, port)}, database ${database}`,
    };
  } catch {
    // Opening it fails next, and says why.
    return { fields: { type: "postgresql" }, text: "PostgreSQL (DATABASE_URL does not parse)" };
  }
}

function describeRateLimiter({ redisUrl }: Pick<Config, "redisUrl">): Described {
  if (!redisUrl) return { fields: { type: "in-process" }, text: "in-process" };
  try {
    const url = new URL(redisUrl);
    // ioredis's defaults, for what the URL leaves out.
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost";
    const port = Number(url.port || 6379);
    return { fields: { type: "redis", host, port }, text: `Redis at ${hostPort(host, port)}` };
  } catch {
    return { fields: { type: "redis" }, text: "Redis (REDIS_URL does not parse)" };
  }
}

/**
 * Says at start where the data and the rate-limit counts live: hosts, ports and names, never a
 * password or a whole URL.
 */
export function logBackendsInUse(logger: Logger, config: Config) {
  const store = describeStore(config);
  const rateLimiter = describeRateLimiter(config);
  logger.info(
    { store: store.fields, rateLimiter: rateLimiter.fields },
    `store: ${store.text}; rate limits: ${rateLimiter.text}`,
  );
}
