import { hash, randomBytes } from "node:crypto";

export type Scope = "read" | "full";
export type Plan = "free" | "paid";

const KEY_PREFIX = "fdk_";

/** A new plaintext key: a recognisable prefix and 256 random bits. Shown once, never stored. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString("base64url");
}

/**
 * Keys carry 256 random bits, so a fast hash is enough to make a stolen table useless; a slow
 * password hash would only add latency to every request.
 */
export function hashApiKey(key: string): string {
  // One call, no Hash object: this runs on every keyed request.
  return hash("sha256", key, "hex");
}

/** What is shown of a key after creation: enough to recognise it, never enough to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}
