import http from "node:http";

/** One answer from the server, with the client's timings (Date.now() milliseconds). */
export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  startedAt: number;
  /** When the whole request had been handed to the socket. */
  sentAt: number | null;
  endedAt: number;
  latencyMs: number;
}

/**
 * A request that got no answer. `timeout`: none within the bound; `network`: the connection was
 * refused, reset or closed. `sentAt` is when the whole request had been handed to the socket.
 */
export class RequestFailure extends Error {
  readonly kind: "timeout" | "network";
  readonly code: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly sentAt: number | null;
  readonly reusedSocket: boolean;
  readonly gotResponseHead: boolean;

  constructor(
    kind: "timeout" | "network",
    code: string,
    details: {
      startedAt: number;
      sentAt: number | null;
      reusedSocket: boolean;
      gotResponseHead: boolean;
    },
  ) {
    super(`${kind}: ${code}`);
    this.kind = kind;
    this.code = code;
    this.startedAt = details.startedAt;
    this.endedAt = Date.now();
    this.sentAt = details.sentAt;
    this.reusedSocket = details.reusedSocket;
    this.gotResponseHead = details.gotResponseHead;
  }

  get latencyMs() {
    return this.endedAt - this.startedAt;
  }
}

export interface RequestOptions {
  method?: string;
  path: string;
  key?: string;
  body?: unknown;
  /** The whole exchange, from the first byte sent to the last received. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** A body sent as it is, with `contentType`, instead of `body` as JSON. */
  rawBody?: string | Buffer;
  contentType?: string;
}

/** Keep-alive connections, as a client library would hold them. */
export const keepAliveAgent = (maxSockets = 64) =>
  new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });

/** Sends one request to `baseUrl` (http://host:port) and reads the whole answer. */
export function send(baseUrl: string, agent: http.Agent, options: RequestOptions): Promise<Reply> {
  const url = new URL(options.path, baseUrl);
  const payload =
    options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers["api-key"] = options.key;
  if (payload !== undefined) {
    headers["content-type"] = options.contentType ?? "application/json";
    headers["content-length"] = String(Buffer.byteLength(payload));
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    let sentAt: number | null = null;
    let gotResponseHead = false;
    let settled = false;
    const request = http.request(url, { method: options.method ?? "GET", agent, headers });
    const fail = (kind: "timeout" | "network", code: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(
        new RequestFailure(kind, code, {
          startedAt,
          sentAt,
          reusedSocket: request.reusedSocket,
          gotResponseHead,
        }),
      );
    };
    const timer = setTimeout(() => {
      fail("timeout", `no answer within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    request.on("finish", () => {
      sentAt = Date.now();
    });
    request.on("error", (error: NodeJS.ErrnoException) =>
      fail("network", error.code ?? error.message),
    );
    request.on("response", (response) => {
      gotResponseHead = true;
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", (error: NodeJS.ErrnoException) =>
        fail("network", error.code ?? error.message),
      );
      response.on("aborted", () => fail("network", "ABORTED"));
      response.on("end", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const endedAt = Date.now();
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8"),
          startedAt,
          sentAt,
          endedAt,
          latencyMs: endedAt - startedAt,
        });
      });
    });
    request.end(payload);
  });
}

/** The body of `reply` as JSON, with the status in the message when it is not JSON. */
export function json<T>(reply: Reply): T {
  try {
    return JSON.parse(reply.text) as T;
  } catch {
    throw new Error(`a ${reply.status} answer is not JSON: ${reply.text.slice(0, 200)}`);
  }
}
