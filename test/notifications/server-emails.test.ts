import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { test } from "node:test";
import { cli, startServer, tempDataDir } from "../server/server-process.ts";
import { SmtpSink } from "./smtp-sink.ts";

const SMTP_PASSWORD = "smtp-password-5e1b";

test("the server sends a form's owner notification through SMTP_URL, and never logs its password", async () => {
  const sink = new SmtpSink();
  await sink.up();
  const dataDir = process.env.DATABASE_URL ? undefined : await tempDataDir();
  const env = {
    ...(dataDir ? { DATABASE_URL: undefined, DATA_DIR: dataDir } : {}),
    SMTP_URL: `smtp://formdeck:${SMTP_PASSWORD}@127.0.0.1:${sink.port}`,
    MAIL_FROM: "Server Forms <server@acme.test>",
  };
  const server = await startServer(env);
  try {
    const org = await cli<{ id: string }>(["org", "create", "--name", "Mail server test"], env);
    const { key } = await cli<{ key: string }>(
      ["key", "create", "--org", org.id, "--scope", "full"],
      env,
    );
    const name = `Server mail ${Date.now()}`;
    const created = await fetch(`${server.url}/api/v1/forms`, {
      method: "POST",
      headers: { "api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name, emailsToNotify: ["owner@acme.test"] }),
    });
    assert.equal(created.status, 201);
    const form = (await created.json()) as { id: string };
    const submitted = await fetch(`${server.url}/f/${form.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ada@example.com", message: "hi" }),
    });
    assert.equal(submitted.status, 201);
    const deadline = Date.now() + 20_000;
    while (sink.withSubject(`New submission: ${name}`).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [mail] = sink.withSubject(`New submission: ${name}`);
    assert.deepEqual(mail?.recipients, ["owner@acme.test"]);
    assert.deepEqual(mail?.parsed.from?.value, [
      { name: "Server Forms", address: "server@acme.test" },
    ]);
  } finally {
    assert.equal(await server.stop("SIGTERM"), 0);
    await sink.down();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
  const log = server.output.join("\n");
  assert.ok(!log.includes(SMTP_PASSWORD), "the SMTP password is not logged");
  assert.ok(!log.includes("SMTP_URL is not set"));
});

test("SIGTERM while an email is being sent: the send finishes within the drain, the process exits 0 in time", async () => {
  const sink = new SmtpSink();
  await sink.up();
  sink.dataDelayMs = 2_000;
  const dataDir = process.env.DATABASE_URL ? undefined : await tempDataDir();
  const env = {
    ...(dataDir ? { DATABASE_URL: undefined, DATA_DIR: dataDir } : {}),
    SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
  };
  const server = await startServer(env);
  try {
    const org = await cli<{ id: string }>(["org", "create", "--name", "Drain test"], env);
    const { key } = await cli<{ key: string }>(
      ["key", "create", "--org", org.id, "--scope", "full"],
      env,
    );
    const name = `Drain ${Date.now()}`;
    const created = await fetch(`${server.url}/api/v1/forms`, {
      method: "POST",
      headers: { "api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name, emailsToNotify: ["owner@acme.test"] }),
    });
    const form = (await created.json()) as { id: string };
    const submitted = await fetch(`${server.url}/f/${form.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "in flight" }),
    });
    assert.equal(submitted.status, 201);
    const deadline = Date.now() + 20_000;
    while (sink.dataStarted === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(sink.dataStarted, 1, "the email is being sent");
    const stoppedAt = Date.now();
    assert.equal(await server.stop("SIGTERM"), 0);
    assert.ok(Date.now() - stoppedAt < 10_000, "stopped within 10 s of SIGTERM");
    assert.equal(
      sink.withSubject(`New submission: ${name}`).length,
      1,
      "the send in flight finished",
    );
  } finally {
    if (server.child.exitCode === null) await server.stop("SIGKILL");
    await sink.down();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
});
