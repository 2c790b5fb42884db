import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, before, test } from "node:test";
import { createLogger } from "../../src/logger.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm } from "../intake/intake-fixtures.ts";
import { requestOverHttp } from "../raw-http.ts";
import { SAMPLE_FORM } from "./sample-form.ts";

/**
 * An app listening on a port, counting the views Fastify routes: a view answered before routing
 * is not counted.
 */
async function listeningApp(options: Parameters<typeof buildTestApp>[1] = {}) {
  let routed = 0;
  const built = await buildTestApp(
    {},
    {
      ...options,
      beforeReady: (app) =>
        app.addHook("onRequest", (request, _reply, done) => {
          if (request.url.startsWith("/f/")) routed++;
          done();
        }),
    },
  );
  await built.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = built.app.server.address() as AddressInfo;
  return { ...built, port, origin: `http://127.0.0.1:${port}`, routed: () => routed };
}

let built: Awaited<ReturnType<typeof listeningApp>>;

before(async () => {
  built = await listeningApp();
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

/** Headers that differ between any two answers whatever answered them. */
const PER_ANSWER = new Set(["date", "x-request-id"]);

/** A page with its nonce and its `_token` replaced by stand-ins. */
function normalized(page: string) {
  const nonce = /nonce="([\w-]+)"/.exec(page)?.[1];
  return (nonce ? page.replaceAll(nonce, "NONCE") : page).replace(
    /name="_token" value="[\w-]+"/,
    'name="_token" value="TOKEN"',
  );
}

/**
 * A view over HTTP, with its nonce and token replaced by stand-ins, and how many views Fastify
 * routed while it was answered.
 */
async function view(path: string, init: RequestInit = {}) {
  const before = built.routed();
  const response = await fetch(`${built.origin}${path}`, init);
  const body = await response.text();
  const policy = response.headers.get("content-security-policy") ?? "";
  const nonce = /'nonce-([\w-]+)'/.exec(policy)?.[1] ?? "no nonce";
  const headers = Object.fromEntries(
    [...response.headers]
      .filter(([name]) => !PER_ANSWER.has(name))
      .map(([name, value]) => [name, value.replaceAll(nonce, "NONCE")]),
  );
  return {
    status: response.status,
    headers,
    requestId: response.headers.get("x-request-id"),
    body: normalized(body),
    routed: built.routed() - before,
  };
}

/**
 * Views the page until a view is answered before routing, and gives that view with the routed
 * view just before it; fails if the first view is not routed (a change left the form held) or no
 * view is held. The cache declines to keep a read that a change announcement overtook (on
 * PostgreSQL the form's own creation is announced, and heard back through the LISTEN connection
 * at any moment) or that came before its listener heard every open transaction end; the next
 * view then tries again.
 */
async function viewUntilHeld(path: string, init: RequestInit = {}) {
  let routed = await view(path, init);
  assert.equal(routed.routed, 1, `the first view of ${path} was answered before routing`);
  for (let attempt = 0; attempt < 20; attempt++) {
    const next = await view(path, init);
    if (routed.routed === 1 && next.routed === 0) return { routed, held: next };
    routed = next;
  }
  assert.fail(`${path} was never answered before routing`);
}

/** A GET with a body (which fetch cannot send), and how many views Fastify routed meanwhile. */
async function viewWithBody(path: string) {
  const before = built.routed();
  const { status, text } = await requestOverHttp(built.port, "GET", path, {}, "a body");
  return { status, body: text, routed: built.routed() - before };
}

test("a held form's view is answered before routing, as the route answers it", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  const { routed, held } = await viewUntilHeld(`/f/${form.id}`);
  assert.deepEqual({ ...held, routed: 1 }, { ...routed, requestId: held.requestId });
  assert.deepEqual(Object.keys(held.headers).sort(), [
    "cache-control",
    "connection",
    "content-length",
    "content-security-policy",
    "content-type",
    "keep-alive",
    "referrer-policy",
    "x-content-type-options",
  ]);
  assert.match(
    held.requestId ?? "",
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  );
  assert.match(held.body, /<form method="post" action="\/f\/form_[\w-]{22}"/);
});

test("a held view answers the client's request id, or a new one for one it cannot use", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  await viewUntilHeld(`/f/${form.id}`);
  const given = await view(`/f/${form.id}`, { headers: { "x-request-id": "proxy-7.a_b" } });
  const refused = await view(`/f/${form.id}`, { headers: { "x-request-id": "no spaces here" } });
  assert.deepEqual([given.routed, given.requestId, refused.routed], [0, "proxy-7.a_b", 0]);
  assert.match(refused.requestId ?? "", /^[0-9a-f-]{36}$/);
});

test("a held form's closed page, and its changes at the next view, are answered before routing", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  await viewUntilHeld(`/f/${form.id}`);
  await form.api.updateOk(form.id, { isClosed: true });
  const { held: closed } = await viewUntilHeld(`/f/${form.id}`);
  assert.equal(closed.status, 200);
  assert.match(closed.body, /<h1>This form is closed<\/h1>/);
  assert.doesNotMatch(closed.body, /<form method="post"/);
  await form.api.updateOk(form.id, { isClosed: false, seoTitle: "Open again" });
  const { held: reopened } = await viewUntilHeld(`/f/${form.id}`);
  assert.match(reopened.body, /<title>Open again<\/title>/);
});

test("what is not a plain view of a held form takes the route and is answered as before", async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  const plain = await view(`/f/${form.id}`);
  const withQuery = await view(`/f/${form.id}?utm_source=mail`);
  const head = await view(`/f/${form.id}`, { method: "HEAD" });
  const withBody = await viewWithBody(`/f/${form.id}`);
  const thanks = await view(`/f/${form.id}/thanks`);
  const endpoint = await newForm(built.app, {});
  await view(`/f/${endpoint.id}`);
  const notHosted = await view(`/f/${endpoint.id}`);
  assert.deepEqual(
    [withQuery, head, withBody, thanks, notHosted].map((answer) => [answer.status, answer.routed]),
    [
      [200, 1],
      [200, 1],
      [200, 1],
      [200, 1],
      [404, 1],
    ],
  );
  assert.equal(withQuery.body, plain.body);
  assert.equal(head.body, "");
  assert.equal(normalized(withBody.body), plain.body);
});

test("while every request is logged, views take the route, which logs them", async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logged = await listeningApp({ logger: createLogger("info", sink) });
  try {
    const form = await newForm(logged.app, SAMPLE_FORM);
    for (let i = 0; i < 2; i++) await fetch(`${logged.origin}/f/${form.id}`);
    const incoming = lines
      .filter((line) => line.msg === "incoming request")
      .map((line) => line.req);
    const path = `/f/${form.id}`;
    assert.deepEqual(logged.routed(), 2);
    assert.deepEqual(incoming.slice(-2), [
      { method: "GET", path, remoteAddress: "127.0.0.1" },
      { method: "GET", path, remoteAddress: "127.0.0.1" },
    ]);
  } finally {
    await logged.close();
  }
});
