/**
 * Issue 4, part 4: mass assignment. Members only the server writes (and `type` on update) are
 * refused by name, alone or beside valid members, and nothing of the request is applied. The
 * captcha secret is stored but never appears in a response or in a log line of a real server
 * process logging at the most verbose level.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type Body, type Client, client, errorOf, unprocessable } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { cli, type RunningServer, startServer, tempDataDir } from "../server/server-process.ts";
import { figure } from "./figures.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

const READ_ONLY = [
  "id",
  "organizationId",
  "createdAt",
  "updatedAt",
  "submissions",
  "webhookEnabled",
  "webhookUrl",
];
/** Spellings that are not the members, refused as unknown. */
const LOOKALIKES = [
  "ID",
  "Id",
  "_id",
  "organizationID",
  "organization_id",
  "orgId",
  "created_at",
  "captcha_secret",
  "settings",
];

let testApp: TestApp;
let api: Client;
let other: Client;
let organizationId: string;
let otherOrganizationId: string;
let attempts = 0;

before(async () => {
  testApp = await buildTestApp({ rateLimitMax: 1_000_000_000 });
  const tenant = await createTenant("paid");
  const second = await createTenant("free");
  api = client(testApp.app, tenant.fullKey);
  other = client(testApp.app, second.fullKey);
  organizationId = tenant.org.id;
  otherOrganizationId = second.org.id;
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

/** Values an attacker would send for each server-written member. */
function hostileValues(form: Body): Record<string, unknown[]> {
  return {
    id: [form.id, "form_AAAAAAAAAAAAAAAAAAAAAA", "x", null, 1],
    organizationId: [otherOrganizationId, organizationId, "org_x", null],
    createdAt: ["2000-01-01T00:00:00.000Z", form.createdAt, 0, null],
    updatedAt: ["2000-01-01T00:00:00.000Z", "2999-01-01T00:00:00.000Z", form.updatedAt],
    submissions: [1_000_000, 0, -1, "1"],
    webhookEnabled: [true, false, "true"],
    webhookUrl: ["https://attacker.example/hook", "", null],
  };
}

describe("server-written members are refused by name, and nothing is applied", () => {
  let form: Body;

  before(async () => {
    form = await api.createOk({ name: "mass assignment target", emailsToNotify: ["a@b.co"] });
  });

  /** A create that must answer `message` and store nothing, in either organization. */
  async function refusedCreate(body: Body, message: string) {
    attempts += 1;
    const [mine, theirs] = [await api.total(), await other.total()];
    const res = await api.create(body);
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 422, body: unprocessable(message) },
      JSON.stringify(body),
    );
    assert.deepEqual(
      [await api.total(), await other.total()],
      [mine, theirs],
      "a refused create stored a form",
    );
  }

  /** An update that must answer `message` and leave the form exactly as it was. */
  async function refusedUpdate(body: Body, message: string, status = 422, error?: Body) {
    attempts += 1;
    const previous = await api.getOk(form.id);
    const theirs = await other.total();
    const res = await api.update(form.id, body);
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status, body: error ?? unprocessable(message) },
      JSON.stringify(body),
    );
    assert.deepEqual(await api.getOk(form.id), previous, "a refused update changed the form");
    assert.equal(await other.total(), theirs);
  }

  test("each read-only member, alone and beside valid members, on create and update", async (t) => {
    for (const [member, values] of Object.entries(hostileValues(form))) {
      for (const value of values) {
        const message = `${member}: is read-only`;
        await refusedCreate({ name: "x", [member]: value }, message);
        await refusedCreate({ [member]: value, name: "x", isClosed: true }, message);
        await refusedUpdate({ [member]: value }, message);
        await refusedUpdate({ name: "changed", isClosed: true, [member]: value }, message);
        await refusedUpdate({ [member]: value, emailsToNotify: ["new@b.co"] }, message);
      }
    }
    // All of them at once: the first is named, nothing applied.
    const all = Object.fromEntries(READ_ONLY.map((m) => [m, hostileValues(form)[m]?.[0]]));
    await refusedUpdate({ name: "changed", ...all }, "id: is read-only");
    figure(t, "mass-assignment read-only attempts", attempts);
  });

  test("type on update is refused by name; the form keeps its type", async () => {
    for (const type of ["hosted", "endpoint", "other", null]) {
      await refusedUpdate({ type }, "type: is not allowed");
      await refusedUpdate({ name: "changed", type }, "type: is not allowed");
    }
    assert.equal((await api.getOk(form.id)).type, "endpoint");
  });

  // Every other member of the record is writable since submissions.md section 1 (the appearance
  // and protection members); the read-only ones are refused above.
  test("look-alike spellings of members are refused as unknown", async () => {
    for (const member of LOOKALIKES) {
      await refusedCreate({ name: "x", [member]: "injected" }, `${member}: is not allowed`);
      await refusedUpdate({ isClosed: true, [member]: "injected" }, `${member}: is not allowed`);
    }
  });

  test("the organization cannot be moved through the plan check either", async () => {
    // A paid-plan setting beside organizationId: the shape is refused before the plan is looked at.
    const freeForm = await other.createOk({ name: "free form" });
    const previous = await other.getOk(freeForm.id);
    const res = await other.update(freeForm.id, { useCustomRedirect: true, organizationId });
    assert.deepEqual(res.body, unprocessable("organizationId: is read-only"));
    assert.deepEqual(await other.getOk(freeForm.id), previous);
    const paidOnly = await other.update(freeForm.id, { useCustomRedirect: true });
    assert.deepEqual(paidOnly.body, errorOf("forbidden", "useCustomRedirect: needs the paid plan"));
    assert.deepEqual(await other.getOk(freeForm.id), previous);
  });

  test("valid updates afterwards still leave the server-written members alone", async () => {
    const previous = await api.getOk(form.id);
    const updated = await api.updateOk(form.id, { name: "renamed", isClosed: true });
    assert.deepEqual(updated, {
      ...previous,
      name: "renamed",
      isClosed: true,
      updatedAt: updated.updatedAt,
    });
    assert.ok(Date.parse(updated.updatedAt) > Date.parse(previous.updatedAt));
  });
});

describe("the captcha secret: stored, never returned", () => {
  test("create, read, update and list never return it; the store keeps it as given", async (t) => {
    const db = testApp.db;
    const secretOf = async (id: string) =>
      (
        await db.query<{ secret: string }>(
          "SELECT captcha_secret AS secret FROM forms WHERE id = $1",
          [id],
        )
      )[0]?.secret;
    const secrets = [
      `sk_${randomUUID()}`,
      `sk_${randomUUID()} with "quotes" and \\ and 😀`,
      `sk_${"x".repeat(996)}`,
    ];
    let checked = 0;
    const hidden = (text: string, secret: string) => {
      checked += 1;
      assert.ok(!text.includes(secret), "the secret is in a response");
      assert.ok(
        !text.includes(JSON.stringify(secret).slice(1, -1)),
        "the secret, escaped, is in a response",
      );
      assert.ok(!text.includes("providerCaptchaSecretKey"), "the secret's member is in a response");
    };
    for (const secret of secrets) {
      const created = await api.create({
        name: `secret ${secret.slice(0, 12)}`,
        providerCaptchaSecretKey: secret,
      });
      assert.equal(created.status, 201, created.text);
      hidden(created.text, secret);
      const id = created.body.id;
      assert.equal(await secretOf(id), secret, "stored as given");
      hidden((await api.get(id)).text, secret);
      hidden((await api.list("?pageSize=100")).text, secret);
      hidden((await api.list(`?search=${encodeURIComponent(created.body.name)}`)).text, secret);
      // An update without the secret keeps it; with one, replaces it; "" clears it.
      hidden((await api.update(id, { name: "renamed secret holder" })).text, secret);
      assert.equal(await secretOf(id), secret);
      const next = `sk_${randomUUID()}`;
      const replaced = await api.update(id, { providerCaptchaSecretKey: next });
      hidden(replaced.text, next);
      assert.equal(await secretOf(id), next);
      hidden((await api.update(id, { providerCaptchaSecretKey: "" })).text, next);
      assert.equal(await secretOf(id), "");
    }
    figure(t, "mass-assignment responses checked for the secret", checked);
  });
});

describe("the captcha secret in the logs of a real server process (LOG_LEVEL=trace)", () => {
  let server: RunningServer;
  let key: string;
  let freeKey: string;

  before(async () => {
    const env = { DATA_DIR: await tempDataDir(), LOG_LEVEL: "trace" };
    server = await startServer(env);
    const org = await cli<{ id: string }>(
      ["org", "create", "--name", "Secrets", "--plan", "paid"],
      env,
    );
    key = (await cli<{ key: string }>(["key", "create", "--org", org.id, "--scope", "full"], env))
      .key;
    const free = await cli<{ id: string }>(
      ["org", "create", "--name", "Free", "--plan", "free"],
      env,
    );
    freeKey = (
      await cli<{ key: string }>(["key", "create", "--org", free.id, "--scope", "full"], env)
    ).key;
  });

  after(async () => {
    if (server && server.child.exitCode === null) await server.stop("SIGKILL");
  });

  test("no log line and no response carries a secret, whatever the request's fate", async (t) => {
    const secret = `sk_live_${randomUUID().replaceAll("-", "")}`;
    const send = async (method: string, path: string, body: string | undefined, apiKey = key) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: {
          "api-key": apiKey,
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        ...(body !== undefined && { body }),
      });
      const text = await res.text();
      assert.ok(!text.includes(secret), `${method} ${path} answered the secret`);
      return { status: res.status, text };
    };
    const created = await send(
      "POST",
      "/forms",
      JSON.stringify({ name: "logged", providerCaptchaSecretKey: secret }),
    );
    assert.equal(created.status, 201);
    const id = JSON.parse(created.text).id as string;
    const fates: [string, string, string | undefined, number, string?][] = [
      ["GET", `/forms/${id}`, undefined, 200],
      ["GET", "/forms?pageSize=100", undefined, 200],
      [
        "PATCH",
        `/forms/${id}`,
        JSON.stringify({ providerCaptchaSecretKey: secret, isClosed: true }),
        200,
      ],
      // Refused for another member: the secret travels in a body that is logged nowhere.
      ["PATCH", `/forms/${id}`, JSON.stringify({ providerCaptchaSecretKey: secret, id: "x" }), 422],
      ["POST", "/forms", JSON.stringify({ providerCaptchaSecretKey: secret }), 422],
      [
        "POST",
        "/forms",
        JSON.stringify({ name: "x", providerCaptchaSecretKey: `${secret}\u0000` }),
        422,
      ],
      [
        "POST",
        "/forms",
        JSON.stringify({ name: "x", providerCaptchaSecretKey: secret.repeat(40) }),
        422,
      ],
      ["POST", "/forms", `{"name":"x","providerCaptchaSecretKey":"${secret}"`, 422],
      [
        "POST",
        "/forms",
        JSON.stringify({ name: "x", providerCaptchaSecretKey: secret, pad: "p".repeat(1_100_000) }),
        413,
      ],
      [
        "POST",
        "/forms",
        JSON.stringify({ name: "x", providerCaptchaSecretKey: secret, useCustomRedirect: true }),
        403,
        "free",
      ],
      [
        "PATCH",
        "/forms/form_AAAAAAAAAAAAAAAAAAAAAA",
        JSON.stringify({ providerCaptchaSecretKey: secret }),
        404,
      ],
      [
        "POST",
        "/forms",
        JSON.stringify({ name: "x", providerCaptchaSecretKey: secret }),
        401,
        "bad",
      ],
    ];
    for (const [method, path, body, status, who] of fates) {
      const apiKey = who === "free" ? freeKey : who === "bad" ? "fdk_not_a_key" : key;
      const res = await send(method, path, body, apiKey);
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = server.output.filter((line) => line.trim() !== "");
    // Every line is JSON, and debug lines were written: the level really is verbose.
    for (const line of lines) JSON.parse(line);
    assert.ok(lines.length >= fates.length * 2, `only ${lines.length} log lines`);
    const text = lines.join("\n");
    assert.ok(!text.includes(secret), "the secret is in the logs");
    for (let i = 0; i + 12 <= secret.length; i += 4) {
      assert.ok(!text.includes(secret.slice(i, i + 12)), "part of the secret is in the logs");
    }
    assert.ok(!text.includes(key.slice(4, 20)), "part of the API key is in the logs");
    figure(t, "mass-assignment log lines scanned for the secret", lines.length);
    figure(t, "mass-assignment requests carrying the secret", fates.length + 1);
  });
});
