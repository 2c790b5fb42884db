import assert from "node:assert/strict";
import type { Queryable } from "../../src/db/database.ts";
import { type App, type Body, client } from "../forms/form-fixtures.ts";
import { createTenant } from "../helpers.ts";

export const FORM_URLENCODED = "application/x-www-form-urlencoded";
export const JSON_TYPE = "application/json";
/** What a browser sends when it posts an HTML form. */
export const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

export interface Post {
  body?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

export interface Posted {
  status: number;
  headers: Record<string, unknown>;
  text: string;
  body: Body;
}

/** POST /f/{formId}; a JSON answer is parsed into `body`. */
export async function post(app: App, formId: string, request: Post = {}): Promise<Posted> {
  const res = await app.inject({
    method: "POST",
    url: `/f/${formId}`,
    headers: {
      ...(request.body !== undefined && { "content-type": request.contentType ?? FORM_URLENCODED }),
      ...request.headers,
    },
    ...(request.body !== undefined && { payload: request.body }),
    ...(request.remoteAddress && { remoteAddress: request.remoteAddress }),
  });
  const json = String(res.headers["content-type"] ?? "").startsWith("application/json");
  return {
    status: res.statusCode,
    headers: res.headers,
    text: res.body,
    body: json ? res.json() : {},
  };
}

/** A multipart body of `parts`, each a field (or a file, with `fileName`), with boundary XB. */
export function multipart(parts: { name: string; value: string; fileName?: string }[]): Post {
  const text = parts
    .map(
      ({ name, value, fileName }) =>
        `--XB\r\nContent-Disposition: form-data; name="${name}"${
          fileName !== undefined ? `; filename="${fileName}"\r\nContent-Type: text/plain` : ""
        }\r\n\r\n${value}\r\n`,
    )
    .join("");
  return { body: `${text}--XB--\r\n`, contentType: "multipart/form-data; boundary=XB" };
}

/** A new organization on `plan` and a form of it with `settings`. */
export async function newForm(app: App, settings: Body = {}, plan: "free" | "paid" = "free") {
  const tenant = await createTenant(plan);
  const api = client(app, tenant.fullKey);
  const form = await api.createOk({ name: "intake test", ...settings });
  return { api, form, id: form.id as string, organizationId: tenant.org.id, key: tenant.fullKey };
}

export interface StoredSubmission {
  id: string;
  isSpam: boolean;
  spamReason: string | null;
  answers: Body[];
  searchText: string;
  meta: Body;
}

/** The form's stored submissions, oldest first. */
export async function storedSubmissions(db: Queryable, formId: string) {
  return db.query<StoredSubmission>(
    `SELECT id, is_spam AS "isSpam", spam_reason AS "spamReason", answers,
            search_text AS "searchText", meta
       FROM submissions WHERE form_id = $1 ORDER BY created_at, id`,
    [formId],
  );
}

/** The form's count as list and read see it. */
export async function countOf(db: Queryable, formId: string): Promise<number> {
  const rows = await db.query<{ count: number }>(
    `SELECT (submissions + COALESCE((SELECT sum(count) FROM submission_count_slots
       WHERE form_id = $1), 0))::int AS count FROM forms WHERE id = $1`,
    [formId],
  );
  return rows[0]?.count ?? -1;
}

/** A refusal with `status` and `body`, and nothing stored or counted. */
export async function assertRefused(
  db: Queryable,
  formId: string,
  res: Posted,
  status: number,
  body: Body,
) {
  assert.deepEqual({ status: res.status, body: res.body }, { status, body }, res.text);
  assert.deepEqual(await storedSubmissions(db, formId), [], "a refused submission stores nothing");
  assert.equal(await countOf(db, formId), 0, "a refused submission is not counted");
}

export const meta = (extra: Body = {}) => ({
  ip: "127.0.0.1",
  country: null,
  userAgent: "lightMyRequest",
  referrer: null,
  ...extra,
});
