import { randomBytes } from "node:crypto";

/** An opaque, URL-safe, unguessable id (128 random bits) with a prefix that names its kind. */
export function newId(prefix: "org" | "key" | "form" | "sub" | "file" | "eml"): string {
  return `${prefix}_${randomBytes(16).toString("base64url")}`;
}
