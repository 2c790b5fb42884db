import type http from "node:http";
import { FORMS, listAllForms } from "./forms-api.ts";
import { json, type Reply, type RequestOptions, send } from "./http-client.ts";

export const URLENCODED = "application/x-www-form-urlencoded";

/** `name=value&…`, each part percent-encoded as a browser does (space as `+`). */
export const urlencoded = (fields: readonly [string, string][]) =>
  fields.map(([name, value]) => `${encode(name)}=${encode(value)}`).join("&");

const encode = (text: string) => encodeURIComponent(text).replaceAll("%20", "+");

/** POST /f/{formId} with a urlencoded body (or `contentType`), answered as JSON. */
export function postIntake(
  baseUrl: string,
  agent: http.Agent,
  formId: string,
  body: string | Buffer,
  options: Partial<RequestOptions> = {},
): Promise<Reply> {
  return send(baseUrl, agent, {
    method: "POST",
    path: `/f/${formId}`,
    rawBody: body,
    contentType: URLENCODED,
    timeoutMs: 10_000,
    ...options,
    headers: { accept: "application/json", ...options.headers },
  });
}

export interface StoredSubmission {
  id: string;
  formId: string;
  isSpam: boolean;
  answers: { id: string; label: string; value: unknown }[];
}

/**
 * Every submission of the form (inbox and spam), from the NDJSON export: one request, whatever
 * their number. Throws on any answer but 200.
 */
export async function exportAll(
  baseUrl: string,
  agent: http.Agent,
  key: string,
  formId: string,
): Promise<StoredSubmission[]> {
  const rows: StoredSubmission[] = [];
  for (const isSpam of [false, true]) {
    const reply = await send(baseUrl, agent, {
      path: `${FORMS}/${formId}/submissions/export?format=ndjson&isSpam=${isSpam}`,
      key,
      timeoutMs: 60_000,
    });
    if (reply.status !== 200) {
      throw new Error(`export answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    }
    for (const line of reply.text.split("\n")) {
      if (line !== "") rows.push(JSON.parse(line) as StoredSubmission);
    }
  }
  return rows;
}

/** Each form of the key's organization as the list reads it: its `isClosed` and `submissions`. */
export async function listedForms(baseUrl: string, agent: http.Agent, key: string) {
  const { items } = await listAllForms(baseUrl, agent, key);
  return new Map(items.map((item) => [item.id, item]));
}

/** A new form of the key's organization with `settings`; throws unless 201. */
export async function createForm(
  baseUrl: string,
  agent: http.Agent,
  key: string,
  settings: Record<string, unknown>,
): Promise<string> {
  const reply = await send(baseUrl, agent, {
    method: "POST",
    path: FORMS,
    key,
    body: { type: "endpoint", ...settings },
  });
  if (reply.status !== 201) throw new Error(`create form: ${reply.status} ${reply.text}`);
  return json<{ id: string }>(reply).id;
}
