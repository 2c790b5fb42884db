import assert from "node:assert/strict";
import type { Queryable } from "../../src/db/database.ts";
import { newId } from "../../src/ids.ts";
import type { Answer } from "../../src/submissions/answer.ts";
import { SUBMISSIONS_SQL } from "../../src/submissions/submission-counts.repository.ts";
import {
  insertSubmissions,
  type NewSubmission,
  type SpamReason,
  type SubmissionMeta,
} from "../../src/submissions/submissions.repository.ts";
import type { App, Body } from "../forms/form-fixtures.ts";

export interface SeedSpec {
  answers?: Answer[];
  isSpam?: boolean;
  spamReason?: SpamReason | null;
  createdAt?: Date;
  meta?: SubmissionMeta;
}

export const DEFAULT_META: SubmissionMeta = {
  ip: "203.0.113.7",
  country: "DE",
  userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
  referrer: "https://www.example.com/contact",
};

/** Answers of an endpoint form: each field's name is its id and its label. */
export const answersOf = (fields: Record<string, unknown>): Answer[] =>
  Object.entries(fields).map(([id, value]) => ({ id, label: id, value }));

let sequence = 0;

/** A contact-form submission, different each time. */
export function contactAnswers(): Answer[] {
  sequence += 1;
  return answersOf({
    name: `Person ${sequence}`,
    email: `person${sequence}@example.com`,
    message: `Hello, this is message number ${sequence}.`,
  });
}

/** `minutes` minutes after a fixed instant, so that tests control the order. */
export const at = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, 0) + minutes * 60_000);

export const daysAgo = (days: number, now = new Date()) =>
  new Date(now.getTime() - days * 86_400_000);

/**
 * Stores one submission per spec in `form` (a record as the API returns it) and returns them as
 * stored. Spam without a reason given is `honeypot`; without a time given, a minute apart.
 */
export async function seedSubmissions(
  db: Queryable,
  form: Body,
  specs: readonly SeedSpec[],
): Promise<NewSubmission[]> {
  const rows = specs.map((spec, index): NewSubmission => {
    const isSpam = spec.isSpam ?? false;
    const createdAt = spec.createdAt ?? at(index);
    return {
      id: newId("sub"),
      formId: form.id as string,
      organizationId: form.organizationId as string,
      isSpam,
      spamReason: spec.spamReason === undefined ? (isSpam ? "honeypot" : null) : spec.spamReason,
      answers: spec.answers ?? contactAnswers(),
      meta: spec.meta ?? DEFAULT_META,
      createdAt,
      updatedAt: createdAt,
    };
  });
  if (rows.length > 0) await insertSubmissions(db, rows);
  return rows;
}

/** The API's record of a stored submission, written out from the spec (not from src/). */
export function recordOf(stored: NewSubmission | undefined): Body {
  assert.ok(stored, "a stored submission");
  const row = stored;
  return {
    id: row.id,
    formId: row.formId,
    isSpam: row.isSpam,
    spamReason: row.spamReason,
    answers: row.answers,
    files: [],
    meta: row.meta,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export interface Response {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are compared whole with deepEqual.
  body: any;
  text: string;
  headers: Record<string, unknown>;
}

/** Requests to the submissions API as one key. */
export function submissionsClient(app: App, key: string) {
  async function call(method: "GET" | "PATCH" | "DELETE", url: string, payload?: unknown) {
    const res = await app.inject({
      method,
      url: `/api/v1/forms/${url}`,
      headers: {
        "api-key": key,
        ...(payload !== undefined && { "content-type": "application/json" }),
      },
      ...(payload !== undefined && { payload: JSON.stringify(payload) }),
    });
    const json = res.headers["content-type"]?.toString().startsWith("application/json");
    return {
      status: res.statusCode,
      body: json ? res.json() : undefined,
      text: res.body,
      headers: res.headers,
    } satisfies Response;
  }
  const client = {
    list: (formId: string, query: Record<string, string> = {}) =>
      call("GET", `${formId}/submissions?${new URLSearchParams(query)}`),
    async listOk(formId: string, query: Record<string, string> = {}) {
      const res = await client.list(formId, query);
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
    get: (formId: string, id: string) => call("GET", `${formId}/submissions/${id}`),
    update: (formId: string, id: string, body: unknown) =>
      call("PATCH", `${formId}/submissions/${id}`, body),
    remove: (formId: string, id: string) => call("DELETE", `${formId}/submissions/${id}`),
    exportAll: (formId: string, query: Record<string, string> = {}) =>
      call("GET", `${formId}/submissions/export?${new URLSearchParams(query)}`),
  };
  return client;
}

/** The form's stored `submissions` counter. */
export async function storedCounter(db: Queryable, formId: string): Promise<number> {
  // The folded column plus the slots not folded yet: the count every read shows.
  const rows = await db.query<{ submissions: number }>(
    `SELECT ${SUBMISSIONS_SQL} AS submissions FROM forms WHERE id = $1`,
    [formId],
  );
  return rows[0]?.submissions as number;
}

/** The stored rows of a form, oldest first, as the fixture wrote them. */
export async function storedIds(db: Queryable, formId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM submissions WHERE form_id = $1 ORDER BY created_at, id",
    [formId],
  );
  return rows.map((row) => row.id);
}
