import net from "node:net";

export interface Relay {
  /** Passes a request on to Redis; by default at once. */
  toRedis?(chunk: Buffer, upstream: net.Socket): void;
  /** Passes a reply back to the client; by default at once. */
  toClient?(chunk: Buffer, client: net.Socket): void;
}

/** A TCP proxy to Redis in this process, whose relaying a test can hold up or slow down. */
export async function startRedisProxy(redisUrl: string, relay: Relay = {}) {
  const target = new URL(redisUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.on("data", (chunk: Buffer) =>
      relay.toRedis ? relay.toRedis(chunk, upstream) : upstream.write(chunk),
    );
    upstream.on("data", (chunk: Buffer) =>
      relay.toClient ? relay.toClient(chunk, client) : client.write(chunk),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
