import type { IncomingMessage } from "node:http";
import type { FastifyReply } from "fastify";
import { bodyGarbage } from "../files/body-garbage.ts";
import type { UploadPace } from "../files/upload-pace.ts";

/** How much of a body answered early is read, for how long, and how fast. */
export interface DrainBounds {
  maxBytes: number;
  maxMs: number;
  pace: UploadPace;
}

/**
 * Reads and discards what is left of a request's body, at most `maxBytes`, as fast as `pace` lets
 * it, for at most `maxMs` besides the pace's waits; true when the body was read to its end. An
 * answer sent before the body was read (a 413, a closed form) must not be followed by closing a
 * connection that still has unread bytes: TCP then resets it, and a client still sending, as a
 * browser uploading a file is, never reads the answer.
 */
export function drainRequest(raw: IncomingMessage, { maxBytes, maxMs, pace }: DrainBounds) {
  if (raw.complete || raw.destroyed) return Promise.resolve(raw.complete);
  return new Promise<boolean>((resolve) => {
    let bytes = 0;
    const reader = pace.drainReader();
    let cancelWait: (() => void) | null = null;
    // The client's time runs out, not ours: each of the pace's waits moves the deadline.
    let deadline = performance.now() + maxMs;
    const finish = (drained: boolean) => {
      clearTimeout(timer);
      cancelWait?.();
      raw.off("data", discard);
      raw.off("end", ended);
      raw.off("close", closed);
      if (!drained) raw.pause();
      resolve(drained);
    };
    const discard = (chunk: Buffer) => {
      bytes += chunk.length;
      bodyGarbage.read(chunk.length);
      if (bytes > maxBytes) {
        finish(false);
        return;
      }
      cancelWait?.();
      const waitStarted = performance.now();
      cancelWait = reader.waitAfter(chunk.length, () => {
        cancelWait = null;
        deadline += performance.now() - waitStarted;
        raw.resume();
      });
      if (cancelWait) raw.pause();
    };
    const ended = () => finish(true);
    const closed = () => finish(raw.complete);
    let timer: NodeJS.Timeout;
    const expireAtDeadline = () => {
      const left = deadline - performance.now();
      if (left > 0) timer = setTimeout(expireAtDeadline, left);
      // A wait of the pace moves the deadline once it ends.
      else if (cancelWait) timer = setTimeout(expireAtDeadline, 100);
      else finish(false);
    };
    timer = setTimeout(expireAtDeadline, maxMs);
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
export function answerWhileDraining(reply: FastifyReply, bounds: DrainBounds) {
  const raw = reply.request.raw;
  void drainRequest(raw, bounds).then((drained) => {
    if (!drained) raw.socket?.destroy();
  });
}
