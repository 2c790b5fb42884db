import type { IncomingMessage } from "node:http";

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
