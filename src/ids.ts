import { randomFillSync } from "node:crypto";

const ID_BYTES = 16;
/**
 * Random bytes drawn 256 ids at a time: one call into the random generator per id cost more
 * than the rest of the id's making (Node's own randomUUID keeps such a cache too).
 */
const pool = Buffer.alloc(ID_BYTES * 256);
let used = pool.length;

/** An opaque, URL-safe, unguessable id (128 random bits) with a prefix that names its kind. */
export function newId(prefix: "org" | "key" | "form" | "sub" | "file" | "eml"): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const id = pool.toString("base64url", used, used + ID_BYTES);
  used += ID_BYTES;
  return `${prefix}_${id}`;
}
