import type { IncomingMessage } from "node:http";
import type { FastifyReply } from "fastify";

/**
 * Reads and discards what is left of a request's body, at most `maxBytes` for at most `maxMs`;
 * true when the body was read to its end. An answer sent before the body was read (a 413, a
 * closed form) must not be followed by closing a connection that still has unread bytes: TCP
 * then resets it, and a client still sending, as a browser uploading a file is, never reads the
 * answer.
 */
export function drainRequest(raw: IncomingMessage, maxBytes: number, maxMs: number) {
  if (raw.complete || raw.destroyed) return Promise.resolve(raw.complete);
  return new Promise<boolean>((resolve) => {
    let bytes = 0;
    const finish = (drained: boolean) => {
      clearTimeout(timer);
      raw.off("data", discard);
      raw.off("end", ended);
      raw.off("close", closed);
      if (!drained) raw.pause();
      resolve(drained);
    };
    const discard = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) finish(false);
    };
    const ended = () => finish(true);
    const closed = () => finish(raw.complete);
    const timer = setTimeout(() => finish(false), maxMs);
    raw.on("data", discard);
    raw.on("end", ended);
    raw.on("close", closed);
    raw.resume();
  });
}

/**
 * An answer sent before the request's body was read (a 413, a closed form, uploads busy) goes at
 * once, and the rest of the body is read and dropped meanwhile (drainRequest). A client that reads
 * while it sends (fetch, curl) stops sending when the answer arrives, and no more of its body is
 * read; one that reads only once it has sent everything, as a browser posting a file does, finds
 * the answer then, rather than a connection reset over unread bytes. Once the body is read the
 * connection serves the client's next request; it is closed when the body is not read (past the
 * bounds, or the client gone). Only for a route whose config has `drainsItsBody`, which the app's
 * own early-answer close leaves alone.
 */
export function answerWhileDraining(reply: FastifyReply, maxBytes: number, maxMs: number) {
  const raw = reply.request.raw;
  void drainRequest(raw, maxBytes, maxMs).then((drained) => {
    if (!drained) raw.socket?.destroy();
  });
}
