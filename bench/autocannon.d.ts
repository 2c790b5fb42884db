// autocannon ships no types; these cover the programmatic API the bench uses.
declare module "autocannon" {
  export interface Result {
    duration: number;
    requests: { total: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  export interface Request extends RequestParams {
    setupRequest?: (request: RequestParams, context: object) => RequestParams;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    warmup?: { connections?: number; duration?: number };
    headers?: Record<string, string>;
    requests?: Request[];
  }

  /** The running benchmark: awaitable for its result, and an emitter of each response. */
  export interface Instance extends PromiseLike<Result> {
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, bytes: number, milliseconds: number) => void,
    ): this;
  }

  export default function autocannon(options: Options): Instance;
}
