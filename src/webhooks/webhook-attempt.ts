import type { Dispatcher } from "undici";
import { request } from "undici";
import { AddressNotAllowedError } from "./address-guard.ts";

/** 15 s from the connection to the last byte read (notifications.md section 3). */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** Only this much of an answer is read and kept; the rest does not change the outcome. */
export const RESPONSE_BODY_LIMIT = 4_096;
/** The longest a 429 or 503's `Retry-After` may push the next attempt back. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export interface AttemptResult {
  at: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** What a 429 or 503 asked to wait, capped at a day; null otherwise. */
  retryAfterMs: number | null;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`; null when unreadable. */
export function retryAfterMs(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  const waitMs = /^[0-9]+$/.test(text)
    ? Number(text) * 1000
    : Number.isNaN(Date.parse(text))
      ? null
      : Date.parse(text) - now.getTime();
  if (waitMs === null) return null;
  return Math.min(Math.max(waitMs, 0), MAX_RETRY_AFTER_MS);
}

/** At most `limit` bytes of the body; the rest is never read (the stream is destroyed). */
async function readHead(body: Dispatcher.ResponseData["body"], limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    chunks.push(buffer.subarray(0, limit - length));
    length += Math.min(buffer.length, limit - length);
    if (length >= limit) break;
  }
  body.destroy();
  return Buffer.concat(chunks);
}

/** Text that PostgreSQL's JSON can keep: no NUL characters. */
const storable = (bytes: Buffer) => bytes.toString("utf8").replaceAll("\u0000", "\uFFFD");

function describeError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs / 1000} s`;
  if (error instanceof AddressNotAllowedError) return error.message;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof AddressNotAllowedError) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The URL without its credentials, and them as Basic authorization: undici would drop them
 * silently, and a receiver protected by a password in its URL expects them.
 */
function withoutCredentials(url: string): {
  target: string;
  authorization: Record<string, string>;
} {
  const parsed = new URL(url);
  if (parsed.username === "" && parsed.password === "") return { target: url, authorization: {} };
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = "";
  parsed.password = "";
  const basic = Buffer.from(`${user}:${password}`).toString("base64");
  return { target: parsed.href, authorization: { authorization: `Basic ${basic}` } };
}

/**
 * One POST of `body`: 2xx succeeds, anything else (3xx included: redirects are not followed)
 * fails. Never throws: a failure is an attempt with its error.
 */
export async function attemptDelivery(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptResult> {
  const at = new Date();
  const started = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const finished = (fields: Omit<AttemptResult, "at" | "durationMs">): AttemptResult => ({
    at,
    durationMs: Math.round(performance.now() - started),
    ...fields,
  });
  try {
    const { target, authorization } = withoutCredentials(url);
    const response = await request(target, {
      method: "POST",
      dispatcher,
      headers: {
        "content-type": "application/json",
        "user-agent": "formdeck-webhooks",
        ...authorization,
        ...headers,
      },
      body,
      signal: controller.signal,
    });
    const head = await readHead(response.body, RESPONSE_BODY_LIMIT);
    const { statusCode } = response;
    const ok = statusCode >= 200 && statusCode < 300;
    const retryAfter = response.headers["retry-after"];
    return finished({
      statusCode,
      error: ok ? null : `the receiver answered ${statusCode}`,
      responseBody: storable(head),
      retryAfterMs:
        statusCode === 429 || statusCode === 503
          ? retryAfterMs(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, new Date())
          : null,
    });
  } catch (error) {
    return finished({
      statusCode: null,
      error: describeError(error, timedOut, timeoutMs),
      responseBody: null,
      retryAfterMs: null,
    });
  } finally {
    clearTimeout(timer);
  }
}
