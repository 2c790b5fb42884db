import type { Socket } from "node:net";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * The route reads what is left of a body it answered early itself (the intake: up to its
     * largest upload), and keeps the connection: the app's lingering close leaves it alone.
     */
    drainsItsBody?: boolean;
  }
}

/** How long a connection answered early still reads (and drops) what its client sends. */
export const LINGER_MS = 2_000;

const lingering = new WeakSet<Socket>();

/**
 * Makes the close that follows an early answer (sent before the request's body arrived, with
 * `Connection: close`) a lingering one: the answer is sent and the connection's sending side
 * closed, then what the client still sends is read and dropped until it closes its side or for
 * LINGER_MS. Closed at once, with the client's bytes unread, the kernel resets the connection,
 * and a client still sending (a large upload, a browser posting a file) may lose the answer to
 * the reset before reading it. Node's server ends such a connection with `destroySoon`; that is
 * what changes, for this socket only.
 */
export function lingerAfterEarlyAnswer(socket: Socket | null): void {
  // An injected request (tests) has no connection of its own.
  if (!socket || lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
    // The client's side closing (it read the answer) ends the wait.
    this.once("end", () => this.destroy());
    this.resume();
    return this;
  };
}
