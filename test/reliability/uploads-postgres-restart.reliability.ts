import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { Problems, runClients } from "./support/clients.ts";
import { isErrorBody } from "./support/forms-api.ts";
import { json, keepAliveAgent, RequestFailure, send } from "./support/http-client.ts";
import { createForm, exportAll, postIntake } from "./support/intake-api.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { createTenants } from "./support/tenants.ts";
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresUnavailable,
} from "./support/throwaway-postgres.ts";

const CLIENTS = 10;
/** Over one slice of 1 MiB: a file is written in two statements or more. */
const FILE_BYTES = 1_500_000;
const BOUNDARY = "ReliabilityBoundary";
const AFTER_EVENT_MS = byProfile(3000, 10_000);
const CLIENT_TIMEOUT_MS = 30_000;

/** A submission with one text file whose bytes name it. */
function uploadBody(tag: string): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="${tag}.txt"\r\n\r\n`,
    ),
    Buffer.alloc(FILE_BYTES, `${tag};`),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

interface StoredWithFiles {
  id: string;
  files: { id: string; size: number }[];
}

/** Files whose slices do not add up to their size: half-written files the store kept. */
async function incompleteFiles(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ files: number; incomplete: number }>(
      `SELECT count(*)::int AS files,
              count(*) FILTER (WHERE f.size <> COALESCE(c.bytes, 0))::int AS incomplete
         FROM submission_files f
         LEFT JOIN (SELECT file_id, sum(length(content)) AS bytes
                      FROM submission_file_chunks GROUP BY file_id) c ON c.file_id = f.id`,
    );
    return rows[0] as { files: number; incomplete: number };
  } finally {
    await client.end();
  }
}

test("PostgreSQL restarts during uploads (fast, immediate, 2 s down): no acknowledged submission without its file, no half-written file kept", {
  skip: throwawayPostgresUnavailable() ?? false,
}, async (t) => {
  let cluster: ThrowawayPostgres | undefined;
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(CLIENTS);
  try {
    cluster = await startThrowawayPostgres();
    figure(
      t,
      "profile",
      `${PROFILE} (${CLIENTS} clients of 1.5 MB files, ${AFTER_EVENT_MS} ms after each event)`,
    );
    const env = { DATABASE_URL: cluster.url, REDIS_URL: undefined };
    server = await startServerWithin({
      ...env,
      RATE_LIMIT_MAX: "1000000000",
      INTAKE_RATE_LIMIT_MAX: "1000000000",
    });
    const running = server;
    const [tenant] = await createTenants(1, env, "uploads postgres restart");
    assert.ok(tenant);
    const formId = await createForm(running.url, agent, tenant.key, { name: "uploads restart" });

    const acknowledged = new Set<string>();
    const answers = new Map<string, number>();
    const problems = new Problems();
    let stop = false;
    let next = 0;
    const load = runClients(
      CLIENTS,
      () => stop,
      async () => {
        const tag = `u${next++}`;
        try {
          const reply = await postIntake(running.url, agent, formId, uploadBody(tag), {
            contentType: `multipart/form-data; boundary=${BOUNDARY}`,
            timeoutMs: CLIENT_TIMEOUT_MS,
          });
          answers.set(String(reply.status), (answers.get(String(reply.status)) ?? 0) + 1);
          if (reply.status === 201) acknowledged.add(json<{ id: string }>(reply).id);
          else if (reply.status !== 503 || !isErrorBody(reply.text, ["service_unavailable"])) {
            problems.add(`${reply.status} ${reply.text.slice(0, 300)}`);
          }
        } catch (error) {
          if (!(error instanceof RequestFailure)) throw error;
          problems.add(`${error.message} after ${error.latencyMs} ms`);
        }
      },
    );
    const restarts = cluster;
    await sleep(AFTER_EVENT_MS);
    await restarts.restart("fast");
    await sleep(AFTER_EVENT_MS);
    await restarts.restart("immediate");
    await sleep(AFTER_EVENT_MS);
    await restarts.stop("immediate");
    await sleep(2000);
    await restarts.start();
    await sleep(AFTER_EVENT_MS);
    stop = true;
    await load;

    const stored = (await exportAll(
      running.url,
      agent,
      tenant.key,
      formId,
    )) as unknown as StoredWithFiles[];
    const lost = [...acknowledged].filter((id) => !stored.some((row) => row.id === id));
    let withoutFile = 0;
    for (const row of stored) {
      const [file] = row.files;
      if (row.files.length !== 1 || !file || file.size !== FILE_BYTES) {
        withoutFile++;
        continue;
      }
      const reply = await send(running.url, agent, {
        path: `/api/v1/forms/${formId}/submissions/${row.id}/files/${file.id}`,
        key: tenant.key,
        timeoutMs: CLIENT_TIMEOUT_MS,
      });
      if (reply.status !== 200 || Buffer.byteLength(reply.text) !== FILE_BYTES) withoutFile++;
    }
    const files = await incompleteFiles(cluster.url);
    figure(t, "answers", [...answers].map(([status, count]) => `${count} × ${status}`).join(", "));
    figure(
      t,
      "after the restarts",
      `${acknowledged.size} acknowledged, ${stored.length} stored, ${lost.length} lost, ` +
        `${withoutFile} without their file; ${files.files} file rows, ${files.incomplete} incomplete`,
    );
    assert.equal(problems.count, 0, `answers other than 201 and 503: ${problems.summary()}`);
    assert.ok(acknowledged.size > 0, "uploads were acknowledged");
    assert.deepEqual(lost, [], "acknowledged submissions lost");
    assert.equal(withoutFile, 0, "a stored submission without its whole file");
    assert.equal(files.files, stored.length, "file rows without a stored submission");
    assert.equal(files.incomplete, 0, "file rows whose slices do not add up to their size");
    assert.equal(running.child.exitCode, null, "the server survived");
    assert.deepEqual(serverProblems(running, 60), [], "no fatal log line");
  } finally {
    agent.destroy();
    await killIfRunning(server);
    await cluster?.destroy();
  }
});
