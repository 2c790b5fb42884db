/**
 * The reliability suite's two profiles: `ci` (the default) keeps the whole run within a few
 * minutes; `full` (RELIABILITY_PROFILE=full, on demand) runs the long versions.
 */
const requested = process.env.RELIABILITY_PROFILE?.trim() || "ci";
if (requested !== "ci" && requested !== "full") {
  throw new Error(`RELIABILITY_PROFILE: must be ci or full, got "${requested}"`);
}

export const PROFILE: "ci" | "full" = requested;

/** The CI value, or the full one under RELIABILITY_PROFILE=full. */
export const byProfile = <T>(ci: T, full: T): T => (PROFILE === "full" ? full : ci);

/** The store the environment gives: PostgreSQL at DATABASE_URL, else the embedded store. */
export const storeName = () =>
  process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "embedded store (temp DATA_DIR)";
