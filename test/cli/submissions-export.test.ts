import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { createApiKey, createOrganization } from "../../src/admin/admin.service.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { DEFAULT_SETTINGS } from "../../src/forms/form-defaults.ts";
import { newId } from "../../src/ids.ts";
import {
  insertSubmissions,
  type NewSubmission,
} from "../../src/submissions/submissions.repository.ts";
import { type RunningServer, startServer } from "../server/server-process.ts";

const root = path.resolve(import.meta.dirname, "../..");
const { DATABASE_URL, ...inheritedEnv } = process.env;
type Env = Record<string, string>;

const tempDirs: string[] = [];
after(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** bin/formdeck.js with `env` only as the store goes; stdout kept as bytes. */
function formdeck(args: string[], env: Env) {
  const child = spawn(process.execPath, ["bin/formdeck.js", ...args], {
    cwd: root,
    env: { ...inheritedEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  const stdout: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: Buffer; stderr: string }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
  });
}

// More than one export batch (1,000 rows), with answers that CSV must quote or escape.
const SEEDED = 1_200;
const awkwardAnswers = (n: number) => [
  { id: "name", label: "Name", value: n % 100 === 0 ? `Zoë "the" O'Neil, ${n}` : `Person ${n}` },
  { id: "message", label: "Message", value: n % 250 === 0 ? `=1+1\nsecond line ${n}` : "Hi" },
  ...(n % 300 === 0 ? [{ id: "topics", label: "Topics", value: ["a", "b"] }] : []),
];

/** An organization, a key and a form of SEEDED submissions, stored before any server starts. */
async function seed(env: Env) {
  const db = await openDatabase({
    databaseUrl: env.DATABASE_URL ?? null,
    dataDir: env.DATABASE_URL ? null : (env.DATA_DIR as string),
  });
  try {
    await migrate(db);
    const org = await createOrganization(db, { name: "export cli", plan: "free" });
    const { key } = await createApiKey(db, { organizationId: org.id, scope: "read", name: "t" });
    const formId = newId("form");
    await db.query(
      `INSERT INTO forms (id, organization_id, name, type, is_closed, submissions, settings,
                          created_at, updated_at)
       VALUES ($1, $2, 'Contact', 'endpoint', false, 0, $3::text::jsonb, now(), now())`,
      [formId, org.id, JSON.stringify(DEFAULT_SETTINGS)],
    );
    const rows = Array.from({ length: SEEDED }, (_, n): NewSubmission => {
      const createdAt = new Date(Date.UTC(2026, 0, 1) + n * 1_000);
      return {
        id: newId("sub"),
        formId,
        organizationId: org.id,
        isSpam: n % 7 === 0,
        spamReason: n % 7 === 0 ? "honeypot" : null,
        answers: awkwardAnswers(n),
        meta: { ip: "203.0.113.9", country: null, userAgent: null, referrer: null },
        createdAt,
        updatedAt: createdAt,
      };
    });
    await insertSubmissions(db, rows);
    return { key, formId };
  } finally {
    await db.close();
  }
}

async function apiExport(server: RunningServer, key: string, formId: string, format: string) {
  const url = `${server.url}/api/v1/forms/${formId}/submissions/export?format=${format}`;
  const response = await fetch(url, { headers: { "api-key": key } });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

/** The same bytes from the CLI as from the API, for both formats; CSV is the default. */
async function exportsMatch(env: Env, formId: string, expected: Record<string, Buffer>) {
  for (const args of [["--format", "csv"], [], ["--format", "ndjson"]]) {
    const format = args[1] ?? "csv";
    const result = await formdeck(["submissions", "export", "--form", formId, ...args], env);
    assert.equal(result.stderr, "");
    assert.equal(result.code, 0);
    assert.ok(result.stdout.equals(expected[format] as Buffer), `${format}: the API's bytes`);
  }
}

async function refusesUnknownForm(env: Env) {
  const result = await formdeck(["submissions", "export", "--form", "form_nope"], env);
  assert.deepEqual(result, {
    code: 1,
    stdout: Buffer.alloc(0),
    stderr: "formdeck: form form_nope does not exist\n",
  });
}

/**
 * With a server running: the CLI's export equals the API's, submissions received meanwhile
 * included; once the server has stopped, the CLI alone gives the same bytes again.
 */
async function exportWhileRunningAndAfter(env: Env) {
  const { key, formId } = await seed(env);
  // The server inherits this process's environment: DATABASE_URL only where `env` has it.
  const server = await startServer({
    DATABASE_URL: undefined,
    ...env,
    INTAKE_RATE_LIMIT_MAX: "1000",
  });
  const expected: Record<string, Buffer> = {};
  try {
    const posted = await fetch(`${server.url}/f/${formId}`, {
      method: "POST",
      headers: { accept: "application/json" },
      body: new URLSearchParams({ name: "Ada, live", extra: "added while running" }),
    });
    assert.equal(posted.status, 201);
    for (const format of ["csv", "ndjson"]) {
      expected[format] = await apiExport(server, key, formId, format);
    }
    // Every stored non-spam submission is a line: the header, and SEEDED less 1 in 7 plus 1.
    const csvLines = (expected.csv as Buffer).toString("utf8").match(/\r?\n(?=sub_)/g)?.length;
    assert.equal(csvLines, SEEDED - Math.ceil(SEEDED / 7) + 1);
    assert.match((expected.csv as Buffer).toString("utf8"), /added while running/);
    await exportsMatch(env, formId, expected);
    await refusesUnknownForm(env);
  } finally {
    assert.equal(await server.stop(), 0);
  }
  await exportsMatch(env, formId, expected);
  await refusesUnknownForm(env);
}

describe("formdeck submissions export", () => {
  test("embedded store: through the running server's admin socket, then alone", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-export-"));
    tempDirs.push(dataDir);
    await exportWhileRunningAndAfter({ DATA_DIR: dataDir });
  });

  test("PostgreSQL: beside a running server, then alone", {
    skip: !DATABASE_URL && "DATABASE_URL is not set",
  }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-export-"));
    tempDirs.push(dataDir);
    await exportWhileRunningAndAfter({ DATABASE_URL: DATABASE_URL as string, DATA_DIR: dataDir });
  });

  test("a bad format or a missing form exits 2 before any store opens", async () => {
    const env = { DATA_DIR: path.join(tmpdir(), "formdeck-export-never-created") };
    const bad = await formdeck(
      ["submissions", "export", "--form", "form_x", "--format", "xml"],
      env,
    );
    assert.deepEqual(bad, {
      code: 2,
      stdout: Buffer.alloc(0),
      stderr:
        'formdeck: format: must be one of csv, ndjson (see "formdeck submissions export --help")\n',
    });
    const missing = await formdeck(["submissions", "export"], env);
    assert.equal(missing.code, 2);
    assert.equal(
      missing.stderr,
      'formdeck: missing --form <formId> (see "formdeck submissions export --help")\n',
    );
  });
});
