import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers the nth request (0-based); the default is a 204. */
export type Answer = (response: ServerResponse, index: number) => void;

/**
 * A webhook receiver on 127.0.0.1: it keeps every request it is sent, and answers each as
 * `answer` says. `next()` resolves with the next request to arrive.
 */
export async function startReceiver(answer: Answer = (res) => res.writeHead(204).end()) {
  const received: Received[] = [];
  const waiting: ((request: Received) => void)[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      received.push(request);
      answer(res, received.length - 1);
      waiting.shift()?.(request);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** The next request, or the one already received beyond `count` requests. */
    next(count = received.length): Promise<Received> {
      const ready = received[count];
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.push(resolve));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
