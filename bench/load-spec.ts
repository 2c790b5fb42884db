import { API_PREFIX } from "../src/http/api-prefix.ts";

/** The collection every load and baseline is about. */
export const FORMS_PATH = `${API_PREFIX}/forms`;

/** What the load process is asked to do: read as JSON on its stdin. */
export interface LoadSpec {
  /** Origin of the server under test, e.g. http://127.0.0.1:40123. */
  origin: string;
  headers: Record<string, string>;
  /**
   * When given, each request sends the next of these as its `api-key` header, in turn: many
   * clients' keys, so that the key check meets keys it has not seen for a while.
   */
  apiKeys?: string[];
  connections: number;
  durationSeconds: number;
  /** Load sent first and not counted: it fills the server's pools and the database's caches. */
  warmupSeconds: number;
  request: LoadRequest;
}

/**
 * What an update sends: a new name (the one-statement path); `isClosed` toggled or a new
 * auto-close deadline (the paths that read the stored row first); or, in turn, a new name and
 * `isClosed` (both paths meeting on one row).
 */
export type UpdateBody = "rename" | "close" | "auto-close" | "rename or close";

export type LoadRequest =
  | { kind: "get"; path: string }
  /** GET /api/v1/forms/:id, each request the next id of the list. */
  | { kind: "get-each"; formIds: string[] }
  /** POST /api/v1/forms, each with a new name; with `idempotent`, each with a new Idempotency-Key. */
  | { kind: "create"; idempotent?: boolean }
  /** PATCH /api/v1/forms/:id, each request the next id of the list. */
  | { kind: "update"; formIds: string[]; body: UpdateBody }
  /** POST /f/:formId, urlencoded, answered as JSON; each request the next id of the list. */
  | { kind: "intake"; formIds: string[] };

/** What it prints on stdout, as JSON, once done. */
export interface LoadSummary {
  requestsPerSecond: number;
  /** Null when no response came back within the run. */
  latencyMs: { mean: number; p50: number; p99: number } | null;
  requests: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

/** What a contact form sends: three short fields, each submission its own. */
export const intakeBody = (sent: number) =>
  new URLSearchParams({
    name: `Ada Lovelace ${sent}`,
    email: `ada${sent}@example.com`,
    message: `Hello, I would like to know more about your service. Request ${sent}.`,
  }).toString();
