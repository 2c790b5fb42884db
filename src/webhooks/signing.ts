import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";

/** `whsec_` and the base64 of 32 random bytes, as Standard Webhooks libraries read it. */
export const newSecret = () => `${PREFIX}${randomBytes(32).toString("base64")}`;

/** `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the decoded secret. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The Standard Webhooks headers of one attempt: one signature per secret, newest first. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  at: Date,
  body: string,
): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => signature(s, id, timestamp, body)).join(" "),
  };
}
