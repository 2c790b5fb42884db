/**
 * Issue 4, part 1: tenant isolation. Two organizations (one free, one paid), four keys each (two
 * full, two read), several forms each. Every operation with every key of one organization on
 * every form of the other must answer exactly as it answers for a form that does not exist (same
 * status, same body, same headers but the per-request ones), leave the other's forms unchanged,
 * and never show them in a list or a search. Odd ids answer 404 (or 400/422) with the error body.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { type Body, client, MISSING_ID, NOT_FOUND } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createKey, createOrg } from "../helpers.ts";
import { figure } from "./figures.ts";

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
type Method = "GET" | "PATCH" | "DELETE";

interface Reply {
  status: number;
  text: string;
  headers: Record<string, unknown>;
}

interface Tenant {
  label: string;
  organizationId: string;
  fullKey: string;
  keys: { key: string; scope: "full" | "read" }[];
  forms: Body[];
}

const FORMS = "/api/v1/forms";
/** Headers that differ from one request to the next whatever the request. */
const PER_REQUEST = new Set(["x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "date"]);

let testApp: TestApp;
let free: Tenant;
let paid: Tenant;
let requests = 0;

async function send(method: Method, url: string, key: string, payload?: unknown): Promise<Reply> {
  requests += 1;
  const res = await testApp.app.inject({
    method,
    url,
    headers: {
      "api-key": key,
      ...(payload !== undefined && { "content-type": "application/json" }),
    },
    ...(payload !== undefined && { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, text: res.body, headers: res.headers };
}

const formUrl = (id: string) => `${FORMS}/${encodeURIComponent(id)}`;

/** Status, body text and headers, without the headers that change with every request. */
function comparable(reply: Reply) {
  const headers = Object.fromEntries(
    Object.entries(reply.headers).filter(([name]) => !PER_REQUEST.has(name.toLowerCase())),
  );
  return { status: reply.status, text: reply.text, headers };
}

/** An organization with two full and two read keys, and forms unlike each other. */
async function tenant(plan: "free" | "paid"): Promise<Tenant> {
  const org = await createOrg(plan);
  const keys = [
    { key: await createKey(org.id, "full"), scope: "full" as const },
    { key: await createKey(org.id, "full"), scope: "full" as const },
    { key: await createKey(org.id, "read"), scope: "read" as const },
    { key: await createKey(org.id, "read"), scope: "read" as const },
  ];
  const fullKey = keys[0]?.key as string;
  const api = client(testApp.app, fullKey);
  const token = randomUUID();
  const bodies: Body[] = [
    { name: `${plan} isolated ${token} a` },
    {
      name: `${plan} isolated ${token} b`,
      type: "hosted",
      isClosed: true,
      emailsToNotify: [`owner-${plan}@example.com`],
      providerCaptchaSecretKey: `captcha-${token}`,
    },
    { name: `${plan} isolated ${token} c`, maxResponses: 10, limitResponses: true },
    {
      name: `${plan} isolated ${token} d`,
      ...(plan === "paid" && {
        useCustomRedirect: true,
        customSuccessUrl: "https://paid.example/thanks",
        autoCloseEnabled: true,
        autoCloseDate: "2099-01-01",
        autoCloseTime: "12:00",
        autoCloseTimezone: "Europe/Berlin",
      }),
    },
    { name: `${plan} isolated ${token} %_\\' e` },
  ];
  const forms: Body[] = [];
  for (const body of bodies) forms.push(await api.createOk(body));
  return { label: plan, organizationId: org.id, fullKey, keys, forms };
}

/** Every form of `owner` as its owner reads it, and its whole list, for a before/after compare. */
async function snapshot(owner: Tenant) {
  const api = client(testApp.app, owner.fullKey);
  const forms = [];
  for (const form of owner.forms) forms.push(await api.getOk(form.id as string));
  const list = await api.list("?pageSize=100");
  assert.equal(list.status, 200, list.text);
  return { forms, list: list.body };
}

before(async () => {
  // The quota is not under test: thousands of requests go through a few keys.
  testApp = await buildTestApp({ rateLimitMax: 1_000_000_000 });
  free = await tenant("free");
  paid = await tenant("paid");
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

/** Update bodies: valid ones, one with a paid setting (a 403 on a free plan), one invalid. */
const UPDATES: Body[] = [
  { name: "taken over" },
  { isClosed: true },
  { isClosed: false, emailsToNotify: ["attacker@example.com"] },
  { useCustomRedirect: true, customSuccessUrl: "https://attacker.example/" },
  { providerCaptchaSecretKey: "attacker secret" },
  {},
  { name: "" },
];

test("every key of one organization on every form of the other: answered as a missing form", async (t) => {
  const started = requests;
  let identical = 0;
  let notFound = 0;
  let forbidden = 0;
  let unprocessable = 0;
  let total = 0;
  for (const [attacker, victim] of [
    [free, paid],
    [paid, free],
  ] as const) {
    const before = await snapshot(victim);
    for (const { key, scope } of attacker.keys) {
      const operations: [Method, Body | undefined][] = [
        ["GET", undefined],
        ...UPDATES.map((body): [Method, Body] => ["PATCH", body]),
        ["DELETE", undefined],
      ];
      for (const [method, body] of operations) {
        const missing = comparable(await send(method, formUrl(MISSING_ID), key, body));
        for (const form of victim.forms) {
          const answer = comparable(await send(method, formUrl(form.id), key, body));
          total += 1;
          const label = `${attacker.label} ${scope} key ${method} ${JSON.stringify(body)} on ${victim.label}'s form`;
          assert.deepEqual(answer, missing, label);
          identical += 1;
          if (answer.status === 404) {
            notFound += 1;
            assert.equal(answer.text, JSON.stringify(NOT_FOUND));
          } else if (answer.status === 403) {
            // Scope comes before existence: a read key may not write, whatever the id.
            forbidden += 1;
            assert.equal(scope, "read", label);
            assert.notEqual(method, "GET", label);
          } else {
            // Shape comes before existence: an invalid body is refused whatever the id.
            unprocessable += 1;
            assert.equal(answer.status, 422, label);
            assert.deepEqual(body, { name: "" }, label);
          }
        }
      }
    }
    assert.deepEqual(await snapshot(victim), before, `${victim.label}'s forms changed`);
  }
  figure(t, "isolation cross-tenant requests", total);
  figure(
    t,
    "isolation answered exactly as a missing form",
    `${((identical / total) * 100).toFixed(1)}%`,
  );
  figure(
    t,
    "isolation answers",
    `404 ${notFound}, 403 (read key writing) ${forbidden}, 422 (invalid body) ${unprocessable}`,
  );
  figure(t, "isolation requests made (with the missing-form baselines)", requests - started);
  assert.equal(identical, total);
  // Every valid request that passes the scope check is a 404: per direction and form, two full
  // keys × (GET, DELETE and the valid updates), and two read keys × GET.
  const validUpdates = UPDATES.length - 1;
  assert.equal(notFound, 2 * 5 * (2 * (2 + validUpdates) + 2));
});

test("lists and searches never show the other organization's forms", async (t) => {
  const started = requests;
  let searches = 0;
  for (const [viewer, other] of [
    [free, paid],
    [paid, free],
  ] as const) {
    const ownIds = new Set(viewer.forms.map((form) => form.id));
    for (const { key } of viewer.keys) {
      const api = client(testApp.app, key);
      // The whole list, every page, and every filter: only the viewer's own forms.
      for (const query of ["", "?type=hosted", "?type=endpoint", "?sort=submissions"]) {
        const separator = query ? "&" : "?";
        for (const pageSize of [1, 2, 100]) {
          for (let page = 1; ; page++) {
            const res = await api.list(`${query}${separator}pageSize=${pageSize}&page=${page}`);
            requests += 1;
            assert.equal(res.status, 200, res.text);
            for (const item of res.body.data) {
              assert.equal(item.organizationId, viewer.organizationId);
              assert.ok(ownIds.has(item.id), `a form the viewer did not create: ${item.id}`);
            }
            if (res.body.pagination.nextPage === null) break;
          }
        }
      }
      const all = await api.list("?pageSize=100");
      requests += 1;
      assert.equal(all.body.meta.total, viewer.forms.length);
      // Searches for the other's exact names, parts of them, and their ids: nothing.
      for (const form of other.forms) {
        for (const term of [form.name, form.name.slice(0, -2), form.name.toUpperCase(), form.id]) {
          const res = await api.list(`?search=${encodeURIComponent(term)}&pageSize=100`);
          requests += 1;
          searches += 1;
          assert.deepEqual(
            { status: res.status, data: res.body.data, total: res.body.meta?.total },
            { status: 200, data: [], total: 0 },
            `${viewer.label} searched ${JSON.stringify(term)}`,
          );
        }
      }
      // The organization is the key's: a parameter cannot name another one.
      for (const name of ["organizationId", "organization_id", "orgId"]) {
        const res = await api.list(`?${name}=${other.organizationId}`);
        requests += 1;
        assert.deepEqual(
          { status: res.status, body: res.body },
          {
            status: 422,
            body: {
              error: { code: "unprocessable_entity", message: `${name}: is not a known parameter` },
            },
          },
        );
      }
    }
  }
  figure(t, "isolation list and search requests", requests - started);
  figure(t, "isolation searches for the other's names and ids (all empty)", searches);
});

test("odd form ids answer 404 (or 400/422) with the error body, never 5xx, and change nothing", async (t) => {
  const started = requests;
  const victimId = paid.forms[0]?.id as string;
  const ownerId = free.forms[0]?.id as string;
  const suffix = victimId.slice(5);
  // Reach the route as one path segment (encoded): each must answer exactly NOT_FOUND.
  const encoded = [
    "../x",
    "%2e%2e",
    "..%2f",
    `../${victimId}`,
    `form_${"A".repeat(10_000)}`,
    "x".repeat(10_240),
    "' OR 1=1 --",
    `${victimId}' OR '1'='1`,
    "1; DROP TABLE forms; --",
    "form_ÄÖÜäöüßÄÖÜäöüßÄÖÜäöü",
    `form_${"😀".repeat(22)}`,
    "formulär",
    "\u202Eform",
    `form_${suffix.toUpperCase()}`,
    `form_${suffix.toLowerCase()}`,
    `FORM_${suffix}`,
    suffix,
    `${victimId} `,
    ` ${victimId}`,
    `${victimId}\n`,
    `${victimId}\u0000`,
    `${victimId}/`,
    `${victimId}?`,
    `${victimId}#`,
    `${victimId}x`,
    victimId.slice(0, -1),
    `${ownerId.slice(0, -1)}${ownerId.endsWith("A") ? "B" : "A"}`,
    paid.organizationId,
    free.organizationId,
    " ",
    "null",
    "undefined",
    "0",
    "-1",
    "*",
    "%",
    "_",
    "form_",
    `form_${"_".repeat(22)}`,
    `form_${"-".repeat(22)}`,
    "[object Object]",
    "__proto__",
    "constructor",
  ];
  // Sent verbatim: some do not reach the route at all. `otherId` is a form of the other tenant.
  const raw = (otherId: string) => [
    `${FORMS}/../x`,
    `${FORMS}/..`,
    `${FORMS}/.`,
    `${FORMS}/%2e%2e`,
    `${FORMS}/..%2f`,
    `${FORMS}/%2e%2e%2f${otherId}`,
    `${FORMS}/..%2F..%2Fhealthz`,
    `${FORMS}/`,
    `${FORMS}//`,
    `${FORMS}/%00`,
    `${FORMS}/%E0%A4%A`,
    `${FORMS}/%`,
    `${FORMS}/${otherId}/`,
    `${FORMS}/${otherId}/x`,
    `${FORMS}/${otherId};x`,
    `${FORMS}/${otherId}%2F`,
    `${FORMS}/${otherId}?x=1`,
  ];
  let answered = 0;
  let exactNotFound = 0;
  const statuses = new Map<number, number>();
  const check = (reply: Reply, label: string) => {
    answered += 1;
    statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    assert.ok(reply.status < 500, `${label} → ${reply.status} ${reply.text}`);
    assert.ok([400, 404, 422, 403].includes(reply.status), `${label} → ${reply.status}`);
    const body = JSON.parse(reply.text);
    assert.deepEqual(Object.keys(body), ["error"], label);
    assert.deepEqual(Object.keys(body.error).sort(), ["code", "message"], label);
    assert.equal(typeof body.error.message, "string", label);
    const code = {
      400: "bad_request",
      403: "forbidden",
      404: "not_found",
      422: "unprocessable_entity",
    };
    assert.equal(body.error.code, code[reply.status as keyof typeof code], label);
  };
  const before = { free: await snapshot(free), paid: await snapshot(paid) };
  for (const owner of [free, paid]) {
    for (const { key, scope } of owner.keys) {
      for (const id of encoded) {
        for (const [method, body] of [
          ["GET", undefined],
          ["PATCH", { name: "odd id" }],
          ["DELETE", undefined],
        ] as const) {
          const reply = await send(method, formUrl(id), key, body);
          const label = `${method} ${JSON.stringify(id.slice(0, 60))} with a ${scope} key`;
          check(reply, label);
          if (method === "GET" || scope === "full") {
            assert.deepEqual(JSON.parse(reply.text), NOT_FOUND, label);
            exactNotFound += 1;
          }
        }
      }
      const other = owner === free ? paid : free;
      for (const url of raw(other.forms[0]?.id as string)) {
        for (const method of ["GET", "PATCH", "DELETE"] as const) {
          const reply = await send(
            method,
            url,
            key,
            method === "PATCH" ? { name: "odd" } : undefined,
          );
          check(reply, `${method} ${url} with a ${scope} key`);
        }
      }
    }
  }
  assert.deepEqual({ free: await snapshot(free), paid: await snapshot(paid) }, before);
  const health = await testApp.app.inject({ url: "/healthz" });
  assert.equal(health.statusCode, 200);
  figure(t, "isolation odd-id requests", requests - started);
  figure(t, "isolation odd ids answered exactly 404 form: not found", exactNotFound);
  figure(
    t,
    "isolation odd-id statuses",
    [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(", "),
  );
  assert.equal(answered, requests - started);
});
