import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));

after(closeTestDatabase);

/**
 * Redocly's linter, on the document the server serves, with the committed redocly.yaml: no error,
 * no warning. It runs offline: telemetry and update checks are off, and deny-network.ts fails
 * (and reports) any connection it would still try.
 */
test("redocly lint: the served document has no error and no warning", async () => {
  const testApp = await buildTestApp();
  const dir = await mkdtemp(join(tmpdir(), "formdeck-openapi-"));
  try {
    const res = await testApp.app.inject({ url: "/api/v1/openapi.json" });
    assert.equal(res.statusCode, 200);
    const file = join(dir, "openapi.json");
    await writeFile(file, res.body);
    const { stdout, stderr } = await run(
      process.execPath,
      [
        "--import",
        join(root, "test/http/deny-network.ts"),
        join(root, "node_modules/@redocly/cli/bin/cli.js"),
        "lint",
        file,
        "--config",
        join(root, "redocly.yaml"),
        "--format",
        "json",
      ],
      {
        cwd: dir,
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: "off",
          REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
          DO_NOT_TRACK: "1",
        },
      },
    ).catch((error: { stdout: string; stderr: string }) => error);
    assert.doesNotMatch(stderr, /deny-network/);
    const report = JSON.parse(stdout);
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 });
  } finally {
    await rm(dir, { recursive: true, force: true });
    await testApp.close();
  }
});
