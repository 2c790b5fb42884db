// The baseline: what a careful engineer writes first for the same three routes, with node:http and
// pg. Same table, same columns, same row counts and the same JSON shapes as formdeck, with
// parameterized SQL; no framework, no schema validation beyond a light check, and no key check:
// the organization is given at start. Careful: every statement is a named prepared statement
// (parsed and planned once per connection), and a request makes one round trip to the database
// where one suffices: the list's page and its `count(*)` come back from one statement, an update
// of the closing state is one UPDATE. formdeck's targets are ratios to this.
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { autoCloseInstant } from "../../src/forms/auto-close.ts";
import { DEFAULT_SETTINGS } from "../../src/forms/form-defaults.ts";
import { FORMS_PATH } from "../load-spec.ts";
import { listenAddress, requiredEnv } from "./server-env.ts";

const organizationId = requiredEnv("BENCH_ORGANIZATION_ID");
// The same pool as formdeck's (src/db/database.ts): 10 connections, a request waits at most 5 s for
// one and a statement runs at most 10 s. Past a million forms this handler falls behind its load,
// and the timeouts are what let it recover once the load stops.
const pool = new pg.Pool({
  connectionString: requiredEnv("DATABASE_URL"),
  max: 10,
  connectionTimeoutMillis: 5_000,
  query_timeout: 10_000,
});
pool.on("error", () => {});

const IS_CLOSED = `(is_closed OR COALESCE(auto_close_at <= now(), false)) AS "isClosed"`;
const LIST_COLUMNS = `id, name, type, created_at AS "createdAt", updated_at AS "updatedAt",
  COALESCE(settings -> 'imageCompressionType', '[]') AS "imageCompressionType", ${IS_CLOSED},
  submissions, organization_id AS "organizationId"`;
const RECORD_COLUMNS = `id, organization_id AS "organizationId", name, type, ${IS_CLOSED},
  settings, created_at AS "createdAt", updated_at AS "updatedAt"`;
const FILTER = `organization_id = $1 AND ($2::text IS NULL OR type = $2)
  AND ($3::text IS NULL OR name ILIKE $3 ESCAPE '\\')`;
const ORDER = { createdAt: "created_at DESC, id DESC", submissions: "submissions DESC, id DESC" };

class Invalid extends Error {}

function send(response: http.ServerResponse, status: number, body: unknown) {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
  });
  response.end(json);
}

function positiveInteger(raw: string | null, fallback: number, max: number): number {
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new Invalid(raw);
  return value;
}

function oneOf<T extends string>(raw: string | null, values: readonly T[]): T | null {
  if (raw === null) return null;
  if (!values.includes(raw as T)) throw new Invalid(raw);
  return raw as T;
}

async function listForms(query: URLSearchParams) {
  const page = positiveInteger(query.get("page"), 1, Number.MAX_SAFE_INTEGER);
  const pageSize = positiveInteger(query.get("pageSize"), 20, 100);
  const type = oneOf(query.get("type"), ["endpoint", "hosted"]);
  const sort = oneOf(query.get("sort"), ["createdAt", "submissions"]) ?? "createdAt";
  const search = query.get("search");
  const pattern = search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const offset = (BigInt(page) - 1n) * BigInt(pageSize);
  // The count rides along on one row even when the page is past the end (no rows then).
  const { rows } = await pool.query({
    name: `list_${sort}`,
    text: `SELECT (SELECT count(*)::int FROM forms WHERE ${FILTER}) AS total, page.*
             FROM (SELECT 1) AS one LEFT JOIN LATERAL (
               SELECT ${LIST_COLUMNS} FROM forms WHERE ${FILTER}
                ORDER BY ${ORDER[sort]} LIMIT $4 OFFSET $5) AS page ON true`,
    values: [organizationId, type, pattern, pageSize, offset.toString()],
  });
  const total: number = rows[0].total;
  const data = rows[0].id === null ? [] : rows.map(({ total: _total, ...form }) => form);
  const totalPages = Math.ceil(total / pageSize);
  return {
    data,
    meta: { total },
    pagination: {
      totalPages,
      currentPage: page,
      nextPage: page < totalPages ? page + 1 : null,
      previousPage: page > 1 ? page - 1 : null,
    },
  };
}

/** The body's members: `name` and `type` checked, the rest kept as settings. */
function formInput(body: Record<string, unknown>, nameRequired: boolean) {
  const { name, type, isClosed, ...settings } = body;
  const nameValid = typeof name === "string" && name.trim() !== "" && name.length <= 200;
  if (nameRequired ? !nameValid : name !== undefined && !nameValid) throw new Invalid("name");
  if (type !== undefined && type !== "endpoint" && type !== "hosted") throw new Invalid("type");
  return { name: name as string | undefined, type, isClosed: isClosed === true, settings };
}

function toRecord(row: { id: string; settings: object }) {
  const { settings, ...columns } = row;
  return { ...DEFAULT_SETTINGS, ...settings, ...columns };
}

async function createForm(body: Record<string, unknown>) {
  const input = formInput(body, true);
  const now = new Date();
  const { rows } = await pool.query({
    name: "create",
    text: `INSERT INTO forms (id, organization_id, name, type, is_closed, settings, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ${RECORD_COLUMNS}`,
    values: [
      `form_${randomBytes(16).toString("base64url")}`,
      organizationId,
      input.name,
      input.type ?? "endpoint",
      input.isClosed,
      { ...DEFAULT_SETTINGS, ...input.settings },
      now,
    ],
  });
  return toRecord(rows[0]);
}

const AUTO_CLOSE_MEMBERS = [
  "autoCloseEnabled",
  "autoCloseDate",
  "autoCloseTime",
  "autoCloseTimezone",
];

async function updateForm(formId: string, body: Record<string, unknown>) {
  const input = formInput(body, false);
  const touchesDeadline = AUTO_CLOSE_MEMBERS.some((member) => member in input.settings);
  if (!("isClosed" in body) && !touchesDeadline) {
    const { rows } = await pool.query({
      name: "update",
      text: `UPDATE forms SET name = COALESCE($3, name), settings = settings || $4, updated_at = now()
              WHERE organization_id = $1 AND id = $2 RETURNING ${RECORD_COLUMNS}`,
      values: [organizationId, formId, input.name ?? null, input.settings],
    });
    return rows[0] ? toRecord(rows[0]) : null;
  }
  // The closing state in the same UPDATE: a deadline that has passed closes the form and is
  // spent, a new one (computed from the auto-close members sent, over the defaults) re-arms it,
  // and an explicit isClosed has the last word.
  const deadline = touchesDeadline
    ? autoCloseInstant({ ...DEFAULT_SETTINGS, ...input.settings } as typeof DEFAULT_SETTINGS)
    : null;
  const { rows } = await pool.query({
    name: "update_closing",
    text: `UPDATE forms SET name = COALESCE($3, name), settings = settings || $4,
             is_closed = COALESCE($5, is_closed OR COALESCE(auto_close_at <= now(), false)
                                      OR COALESCE($7 <= now(), false)),
             auto_close_at = CASE WHEN $6 AND $7 > now() THEN $7
                                  WHEN $6 OR auto_close_at <= now() THEN NULL
                                  ELSE auto_close_at END,
             updated_at = now()
            WHERE organization_id = $1 AND id = $2 RETURNING ${RECORD_COLUMNS}`,
    values: [
      organizationId,
      formId,
      input.name ?? null,
      input.settings,
      "isClosed" in body ? input.isClosed : null,
      touchesDeadline,
      deadline,
    ],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

async function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of request) text += chunk;
  const body: unknown = JSON.parse(text);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Invalid("body");
  return body as Record<string, unknown>;
}

async function handle(request: http.IncomingMessage, response: http.ServerResponse) {
  const url = new URL(request.url ?? "/", "http://localhost");
  const formId = url.pathname.startsWith(`${FORMS_PATH}/`)
    ? url.pathname.slice(FORMS_PATH.length + 1)
    : undefined;
  if (url.pathname === FORMS_PATH && request.method === "GET") {
    return send(response, 200, await listForms(url.searchParams));
  }
  if (url.pathname === FORMS_PATH && request.method === "POST") {
    const form = await createForm(await readJson(request));
    response.setHeader("location", `${FORMS_PATH}/${form.id}`);
    return send(response, 201, form);
  }
  if (formId && request.method === "PATCH") {
    const form = await updateForm(formId, await readJson(request));
    if (form) return send(response, 200, form);
  }
  send(response, 404, { error: { code: "not_found", message: "not found" } });
}

const { port, host } = listenAddress();
http
  .createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const invalid = error instanceof Invalid || error instanceof SyntaxError;
      send(response, invalid ? 422 : 500, {
        error: { code: invalid ? "unprocessable_entity" : "internal", message: String(error) },
      });
    });
  })
  .listen(port, host);
