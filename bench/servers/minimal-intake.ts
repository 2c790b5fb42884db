// The intake's baseline: what a careful engineer writes first for POST /f/:formId with node:http
// and pg. It parses the urlencoded body, stores the row in the same table as formdeck (its
// triggers included) and bumps the form's counter, in one transaction. Careful: one named
// prepared statement, so one round trip: the form is read, the row inserted and the counter
// bumped by one statement, which PostgreSQL runs as one transaction. No rate limit, no spam
// layers, no idempotency, no closing rules beyond `is_closed`.
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { listenAddress, requiredEnv } from "./server-env.ts";

// The same pool as formdeck's (src/db/database.ts).
const pool = new pg.Pool({
  connectionString: requiredEnv("DATABASE_URL"),
  max: 10,
  connectionTimeoutMillis: 5_000,
  query_timeout: 10_000,
});
pool.on("error", () => {});

const STORE = `WITH form AS (
    SELECT id, organization_id FROM forms WHERE id = $1 AND NOT is_closed
  ), stored AS (
    INSERT INTO submissions (id, form_id, organization_id, is_spam, spam_reason, answers,
                             search_text, meta, created_at, updated_at)
    SELECT $2, form.id, form.organization_id, false, NULL, $3::text::jsonb, $4, $5::text::jsonb,
           now(), now() FROM form
    RETURNING form_id
  )
  UPDATE forms SET submissions = submissions + 1 FROM stored WHERE forms.id = stored.form_id
  RETURNING forms.id`;

function send(response: http.ServerResponse, status: number, body: unknown) {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
  });
  response.end(json);
}

async function receive(request: http.IncomingMessage, response: http.ServerResponse) {
  const formId = /^\/f\/([A-Za-z0-9_-]+)$/.exec(request.url ?? "")?.[1];
  if (!formId || request.method !== "POST") {
    return send(response, 404, { error: { code: "not_found", message: "not found" } });
  }
  let text = "";
  for await (const chunk of request) text += chunk;
  const answers = [...new URLSearchParams(text)].map(([name, value]) => ({
    id: name,
    label: name,
    value,
  }));
  if (answers.length === 0) {
    return send(response, 422, { error: { code: "invalid", message: "body: is empty" } });
  }
  const id = `sub_${randomBytes(16).toString("base64url")}`;
  const meta = {
    ip: request.socket.remoteAddress ?? null,
    country: null,
    userAgent: request.headers["user-agent"] ?? null,
    referrer: request.headers.referer ?? null,
  };
  const { rowCount } = await pool.query({
    name: "store",
    text: STORE,
    values: [
      formId,
      id,
      JSON.stringify(answers),
      answers.map((answer) => answer.value).join("\n"),
      JSON.stringify(meta),
    ],
  });
  if (rowCount === 0) {
    return send(response, 404, { error: { code: "not_found", message: "form: not found" } });
  }
  send(response, 201, { ok: true, id });
}

const { port, host } = listenAddress();
http
  .createServer((request, response) => {
    receive(request, response).catch(() => {
      if (!response.headersSent) send(response, 500, { error: { code: "internal" } });
    });
  })
  .listen(port, host);
