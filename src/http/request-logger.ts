import type { FastifyBaseLogger } from "fastify";
import { type Bindings, type ChildLoggerOptions, type LevelWithSilentOrString, levels } from "pino";

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

/** Whether `logger` writes lines of `level` (when its level is one pino knows; else it decides). */
export function writes(logger: FastifyBaseLogger, level: Level) {
  if (logger.level === "silent") return false;
  const threshold = levels.values[logger.level];
  return threshold === undefined || (levels.values[level] ?? 0) >= threshold;
}

/**
 * `request.log`, whose pino child is made at the first line its level lets through. Fastify makes
 * a child per request, and pino's child serializes the request id into its bindings: a microsecond
 * per request, a fortieth of a hosted page view, for requests that mostly log nothing.
 */
class RequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #logger(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }

  #log(level: Level, line: unknown[]) {
    if (this.#child === undefined && !writes(this.#parent, level)) return;
    const logger = this.#logger();
    Reflect.apply(logger[level], logger, line);
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#logger().level = level;
  }

  fatal(...line: unknown[]) {
    this.#log("fatal", line);
  }
  error(...line: unknown[]) {
    this.#log("error", line);
  }
  warn(...line: unknown[]) {
    this.#log("warn", line);
  }
  info(...line: unknown[]) {
    this.#log("info", line);
  }
  debug(...line: unknown[]) {
    this.#log("debug", line);
  }
  trace(...line: unknown[]) {
    this.#log("trace", line);
  }
  silent() {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory` for `logger`: a lazy child, unless a route sets its own level or
 * serializers (none does), which only pino's child applies.
 */
export const requestLoggerOf =
  (logger: FastifyBaseLogger) =>
  (_parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) =>
    options.level === undefined && options.serializers === undefined
      ? new RequestLogger(logger, bindings)
      : logger.child(bindings, options);
