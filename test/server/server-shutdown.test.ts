import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import http from "node:http";
import { after, test } from "node:test";
import { type RunningServer, startServer, tempDataDir } from "./server-process.ts";

let server: RunningServer | undefined;
let dataDir: string | undefined;

after(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill("SIGCONT");
    await server.stop("SIGKILL");
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** GET `url` on a connection of its own: the status, or the error code when there is no answer. */
function getOnNewConnection(url: string): Promise<string> {
  return new Promise((resolve) => {
    http
      .get(url, { agent: false }, (response) => {
        response.resume();
        response.on("end", () => resolve(String(response.statusCode)));
        response.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      })
      .on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });
}

// Found by the reliability suite (SIGTERM under load on a busy machine): requests sent well before
// SIGTERM were reset. The event loop accepts one connection per turn; SIGTERM closed the listener
// and the idle connections at once, so connections not yet accepted, or accepted but not yet
// read, were reset although their requests had been sent.
test("SIGTERM answers requests that reached the process before it, even not yet accepted", async () => {
  dataDir = process.env.DATABASE_URL ? undefined : await tempDataDir();
  server = await startServer(dataDir ? { DATA_DIR: dataDir } : {});
  const { url } = server;
  assert.equal(await getOnNewConnection(`${url}/healthz`), "200");

  const pid = server.child.pid as number;
  // Frozen, the process accepts nothing: the kernel queues the connections and their requests.
  process.kill(pid, "SIGSTOP");
  const answers = Array.from({ length: 20 }, () => getOnNewConnection(`${url}/healthz`));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const exitCode = server.stop("SIGTERM");
  process.kill(pid, "SIGCONT");

  assert.deepEqual(await Promise.all(answers), Array(20).fill("200"));
  assert.equal(await exitCode, 0);
});
