import assert from "node:assert/strict";
import { test } from "node:test";
import { type Body, client, MISSING_ID, NOT_FOUND, unprocessable } from "../forms/form-fixtures.ts";
import { createTenant, useTestApp } from "../helpers.ts";
import {
  answersOf,
  at,
  recordOf,
  type SeedSpec,
  seedSubmissions,
  submissionsClient,
} from "./submission-fixtures.ts";

const built = useTestApp();

async function tenantWithForm() {
  const tenant = await createTenant();
  const form = await client(built.app, tenant.fullKey).createOk({ name: "Contact" });
  return { form, api: submissionsClient(built.app, tenant.readKey) };
}

const ids = (body: Body) => body.data.map((s: Body) => s.id);
/** Newest first, then the greater id first: the list's order. */
const newestFirst = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1);

test("a form without submissions: no data, zero totals, no pages", async () => {
  const { form, api } = await tenantWithForm();
  assert.deepEqual(await api.listOk(form.id), {
    data: [],
    meta: { total: 0, totalInbox: 0, totalSpam: 0 },
    pagination: { totalPages: 0, currentPage: 1, nextPage: null, previousPage: null },
  });
});

test("the inbox by default, spam with isSpam=true; newest first, id breaking ties", async () => {
  const { form, api } = await tenantWithForm();
  const rows = await seedSubmissions(built.db, form, [
    { createdAt: at(1) },
    { createdAt: at(5) },
    { createdAt: at(5) },
    { createdAt: at(5) },
    { createdAt: at(3) },
    { createdAt: at(2), isSpam: true },
    { createdAt: at(4), isSpam: true, spamReason: "domain" },
  ]);
  const inbox = rows.filter((row) => !row.isSpam).sort(newestFirst);
  const spam = rows.filter((row) => row.isSpam).sort(newestFirst);
  const meta = { totalInbox: 5, totalSpam: 2 };
  const onePage = { totalPages: 1, currentPage: 1, nextPage: null, previousPage: null };
  assert.deepEqual(await api.listOk(form.id), {
    data: inbox.map(recordOf),
    meta: { total: 5, ...meta },
    pagination: onePage,
  });
  assert.deepEqual(await api.listOk(form.id, { isSpam: "false" }), await api.listOk(form.id));
  assert.deepEqual(await api.listOk(form.id, { isSpam: "true" }), {
    data: spam.map(recordOf),
    meta: { total: 2, ...meta },
    pagination: onePage,
  });
});

test("pages follow the forms rules; a page past the end is empty", async () => {
  const { form, api } = await tenantWithForm();
  const rows = (await seedSubmissions(built.db, form, Array(5).fill({}))).sort(newestFirst);
  const page = (n: number) => api.listOk(form.id, { page: String(n), pageSize: "2" });
  const expected = [
    [1, [0, 1], { totalPages: 3, currentPage: 1, nextPage: 2, previousPage: null }],
    [2, [2, 3], { totalPages: 3, currentPage: 2, nextPage: 3, previousPage: 1 }],
    [3, [4], { totalPages: 3, currentPage: 3, nextPage: null, previousPage: 2 }],
    [9, [], { totalPages: 3, currentPage: 9, nextPage: null, previousPage: 8 }],
  ] as const;
  for (const [n, indexes, pagination] of expected) {
    assert.deepEqual(await page(n), {
      data: indexes.map((i) => recordOf(rows[i])),
      meta: { total: 5, totalInbox: 5, totalSpam: 0 },
      pagination,
    });
  }
  const largest = await api.listOk(form.id, { page: "9007199254740991", pageSize: "100" });
  assert.deepEqual(largest.data, []);
});

test("deep pages (an offset of 200 and more) hold the same rows as walking there", async () => {
  const { form, api } = await tenantWithForm();
  const specs: SeedSpec[] = Array.from({ length: 230 }, (_, i) => ({
    createdAt: at(Math.floor(i / 3)),
    isSpam: i % 10 === 0,
  }));
  const rows = await seedSubmissions(built.db, form, specs);
  const inbox = rows.filter((row) => !row.isSpam).sort(newestFirst);
  for (const n of ["10", "11", "12"]) {
    const body = await api.listOk(form.id, { page: n, pageSize: "20" });
    const from = (Number(n) - 1) * 20;
    assert.deepEqual(
      ids(body),
      inbox.slice(from, from + 20).map((row) => row.id),
      n,
    );
    assert.deepEqual(body.meta, { total: 207, totalInbox: 207, totalSpam: 23 });
  }
});

test("since ≤ createdAt < until, in any zone; the totals count the same range", async () => {
  const { form, api } = await tenantWithForm();
  const rows = await seedSubmissions(built.db, form, [
    { createdAt: at(0) },
    { createdAt: at(10) },
    { createdAt: at(20) },
    { createdAt: at(30) },
    { createdAt: at(15), isSpam: true },
    { createdAt: at(25), isSpam: true },
  ]);
  const [r0, r10, r20, r30] = rows;
  const cases: [Record<string, string>, ((typeof rows)[number] | undefined)[], number][] = [
    [{ since: at(10).toISOString() }, [r30, r20, r10], 2],
    [{ until: at(20).toISOString() }, [r10, r0], 1],
    [{ since: at(10).toISOString(), until: at(30).toISOString() }, [r20, r10], 2],
    // 12:10 UTC written as 13:10 in +01:00, and as a `+` the query string decoded to a space.
    [{ since: "2026-11-01T13:10+01:00", until: "2026-11-01T07:30:00-05:00" }, [r20, r10], 2],
    [{ since: "2026-11-01T13:10 01:00" }, [r30, r20, r10], 2],
    [{ since: "2026-11-01T12:10:00.001Z" }, [r30, r20], 2],
    [{ since: at(30).toISOString(), until: at(10).toISOString() }, [], 0],
  ];
  for (const [query, expected, spam] of cases) {
    const body = await api.listOk(form.id, query);
    assert.deepEqual(
      ids(body),
      expected.map((row) => row?.id),
      JSON.stringify(query),
    );
    assert.deepEqual(
      body.meta,
      { total: expected.length, totalInbox: expected.length, totalSpam: spam },
      JSON.stringify(query),
    );
  }
});

test("search: case-insensitive substring of any answer value; % _ \\ literal; NFC", async () => {
  const { form, api } = await tenantWithForm();
  const values = [
    "100% sure",
    "1000 sure",
    "a_b",
    "axb",
    "back\\slash",
    "backslash",
    "ÄRGER im Büro",
    "Cafe\u0301 au lait",
    "Café noir",
  ];
  const rows = await seedSubmissions(built.db, form, [
    ...values.map((value) => ({ answers: answersOf({ message: value }) })),
    { answers: answersOf({ topics: ["alpha", "Needle in a list"] }) },
    { answers: answersOf({ nested: { deep: "needle in JSON" }, count: 4242 }) },
    { answers: answersOf({ label: "no match here" }), isSpam: true },
    { answers: answersOf({ message: "a needle in spam" }), isSpam: true },
  ]);
  const byValue = (text: string) =>
    rows.find((row) =>
      row.answers.some((answer) =>
        (typeof answer.value === "string" ? answer.value : JSON.stringify(answer.value)).includes(
          text,
        ),
      ),
    )?.id;
  const cases: [string, string[], number][] = [
    ["%", ["100% sure"], 0],
    ["_", ["a_b"], 0],
    ["\\", ["back\\slash"], 0],
    ["k\\s", ["back\\slash"], 0],
    ["SURE", ["100% sure", "1000 sure"], 0],
    ["ärger", ["ÄRGER im Büro"], 0],
    // Composed and decomposed forms of é find each other.
    ["café", ["Cafe\u0301 au lait", "Café noir"], 0],
    ["Cafe\u0301", ["Cafe\u0301 au lait", "Café noir"], 0],
    ["NEEDLE", ["Needle in a list", "needle in JSON"], 1],
    ["4242", ["needle in JSON"], 0],
    // Labels and answer ids are not values.
    ["topics", [], 0],
    ["%%", [], 0],
  ];
  for (const [search, expected, spam] of cases) {
    const body = await api.listOk(form.id, { search });
    assert.deepEqual(
      [...ids(body)].sort(),
      expected.map(byValue).sort(),
      `search ${JSON.stringify(search)}`,
    );
    assert.deepEqual(body.meta, {
      total: expected.length,
      totalInbox: expected.length,
      totalSpam: spam,
    });
  }
  const spam = await api.listOk(form.id, { search: "needle", isSpam: "true" });
  assert.deepEqual(ids(spam), [byValue("a needle in spam")]);
  assert.deepEqual(spam.meta, { total: 1, totalInbox: 2, totalSpam: 1 });
  // An empty term is no search.
  assert.deepEqual((await api.listOk(form.id, { search: "" })).meta.total, rows.length - 2);
});

test("search and dates together, and search on deep pages", async () => {
  const { form, api } = await tenantWithForm();
  const specs: SeedSpec[] = Array.from({ length: 240 }, (_, i) => ({
    createdAt: at(i),
    answers: answersOf({ message: i % 2 ? `odd ${i}` : `even ${i}` }),
  }));
  const rows = await seedSubmissions(built.db, form, specs);
  const odd = rows.filter((_, i) => i % 2).sort(newestFirst);
  const body = await api.listOk(form.id, { search: "ODD", page: "6", pageSize: "20" });
  assert.deepEqual(
    ids(body),
    odd.slice(100, 120).map((row) => row.id),
  );
  assert.deepEqual(body.meta, { total: 120, totalInbox: 120, totalSpam: 0 });
  const ranged = await api.listOk(form.id, {
    search: "odd",
    since: at(10).toISOString(),
    until: at(20).toISOString(),
  });
  assert.deepEqual(
    ids(ranged),
    [19, 17, 15, 13, 11].map((i) => rows[i]?.id),
  );
});

test("bad parameters are refused by name before the form is looked up", async () => {
  const { form, api } = await tenantWithForm();
  const instant = "must be an ISO 8601 instant with a time zone, such as 2026-11-22T04:51:21Z";
  const cases: [string, string][] = [
    ["page=0", "page: must be a whole number greater than 0"],
    ["pageSize=101", "pageSize: must be at most 100"],
    ["pageSize=1e2", "pageSize: must be a whole number greater than 0"],
    ["isSpam=yes", "isSpam: must be one of true, false"],
    ["isSpam=true&isSpam=false", "isSpam: must be given once"],
    ["since=yesterday", `since: ${instant}`],
    ["since=2026-11-01", `since: ${instant}`],
    ["until=2026-11-01T12:00:00", `until: ${instant}`],
    ["until=2026-02-30T12:00Z", `until: ${instant}`],
    ["since=0000-01-01T00:00Z", `since: ${instant}`],
    ["format=csv", "format: is not a known parameter"],
    [`search=${"x".repeat(201)}`, "search: must be at most 200 characters"],
  ];
  for (const formId of [form.id, MISSING_ID]) {
    for (const [query, message] of cases) {
      const res = await built.app.inject({
        url: `/api/v1/forms/${formId}/submissions?${query}`,
        headers: { "api-key": (await createTenant()).readKey },
      });
      assert.deepEqual([res.statusCode, res.json()], [422, unprocessable(message)], query);
    }
  }
  assert.equal((await api.list(form.id)).status, 200);
});

test("another organization's form, a missing one and an odd id: 404", async () => {
  const { api } = await tenantWithForm();
  const theirs = await tenantWithForm();
  await seedSubmissions(built.db, theirs.form, [{}]);
  for (const formId of [theirs.form.id, MISSING_ID, "form_", "x".repeat(300)]) {
    const res = await api.list(formId);
    assert.deepEqual([res.status, res.body], [404, NOT_FOUND], formId);
  }
});
