import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunningServer } from "../server/server-process.ts";
import { figure } from "./figures.ts";
import { runClients } from "./support/clients.ts";
import { json, keepAliveAgent, RequestFailure, send } from "./support/http-client.ts";
import { createForm, exportAll, postIntake } from "./support/intake-api.ts";
import { sleep } from "./support/ports.ts";
import { byProfile, PROFILE } from "./support/profile.ts";
import { killIfRunning, serverProblems, startServerWithin } from "./support/servers.ts";
import { storeFromEnvironment } from "./support/store.ts";
import { createTenants } from "./support/tenants.ts";

const LIMITS = { RATE_LIMIT_MAX: "1000000000", INTAKE_RATE_LIMIT_MAX: "1000000000" };
const CONCURRENCY = 10;
const LOAD_BEFORE_KILL_MS = byProfile(3_000, 8_000);
const FILE_BYTES = 300_000;
const BOUNDARY = "ReliabilityBoundary";

/** A submission with one text file of FILE_BYTES whose bytes name it. */
function uploadBody(tag: string): Buffer {
  const content = Buffer.alloc(FILE_BYTES, `${tag};`);
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="tag"\r\n\r\n${tag}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="${tag}.txt"\r\n\r\n`,
    ),
    content,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

interface StoredWithFiles {
  id: string;
  files: { id: string; name: string; size: number }[];
}

test("kill -9 during uploads: every acknowledged submission has its file, none points at a missing one", async (t) => {
  const store = await storeFromEnvironment();
  let server: RunningServer | undefined;
  const agent = keepAliveAgent(CONCURRENCY);
  try {
    figure(t, "profile", `${PROFILE} (${LOAD_BEFORE_KILL_MS} ms of uploads before kill -9)`);
    figure(t, "store", store.name);
    const env = { ...store.env, ...LIMITS };
    server = await startServerWithin(env);
    const [tenant] = await createTenants(1, store.env, "uploads kill -9");
    assert.ok(tenant);
    const formId = await createForm(server.url, agent, tenant.key, { name: "uploads kill -9" });
    const acknowledged = new Set<string>();
    let failures = 0;
    let killed = false;
    let next = 0;
    const running = server;
    const load = runClients(
      CONCURRENCY,
      () => killed,
      async () => {
        const tag = `u${next++}`;
        try {
          const reply = await postIntake(running.url, agent, formId, uploadBody(tag), {
            contentType: `multipart/form-data; boundary=${BOUNDARY}`,
            timeoutMs: 30_000,
          });
          if (reply.status === 201) acknowledged.add(json<{ id: string }>(reply).id);
        } catch (error) {
          if (!(error instanceof RequestFailure)) throw error;
          failures++;
        }
      },
    );
    await sleep(LOAD_BEFORE_KILL_MS);
    assert.equal(await server.stop("SIGKILL"), null, "killed, not exited");
    killed = true;
    await load;
    server = await startServerWithin(env, 60_000);
    const stored = (await exportAll(
      server.url,
      agent,
      tenant.key,
      formId,
    )) as unknown as StoredWithFiles[];
    const lost = [...acknowledged].filter((id) => !stored.some((row) => row.id === id));
    let missingFiles = 0;
    for (const row of stored) {
      if (row.files.length !== 1 || row.files[0]?.size !== FILE_BYTES) missingFiles++;
      for (const file of row.files) {
        const reply = await send(server.url, agent, {
          path: `/api/v1/forms/${formId}/submissions/${row.id}/files/${file.id}`,
          key: tenant.key,
          timeoutMs: 30_000,
        });
        if (reply.status !== 200 || Buffer.byteLength(reply.text) !== FILE_BYTES) missingFiles++;
      }
    }
    figure(
      t,
      "kill -9 during uploads",
      `${acknowledged.size} acknowledged, ${failures} cut by the kill; after restart ` +
        `${stored.length} stored, ${lost.length} acknowledged lost, ${missingFiles} without their file`,
    );
    assert.ok(acknowledged.size > 0, "uploads were acknowledged before the kill");
    assert.deepEqual(lost, [], "acknowledged submissions lost");
    assert.equal(missingFiles, 0, "a stored submission without its file");
    assert.deepEqual(serverProblems(server, 50), [], "no error logged after the restart");
  } finally {
    agent.destroy();
    await killIfRunning(server);
    await store.cleanup();
  }
});
