import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { createTenant, useTestApp } from "../helpers.ts";

interface Form {
  id: string;
  name: string;
  type: string;
  createdAt: string;
  [member: string]: unknown;
}

const FORMS = "/api/v1/forms";
const testApp = useTestApp();

async function create(key: string, body: object): Promise<Form> {
  const res = await testApp.app.inject({
    method: "POST",
    url: FORMS,
    headers: { "api-key": key },
    payload: body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function list(key: string, query: Record<string, string> | string = "") {
  const qs = typeof query === "string" ? query : new URLSearchParams(query).toString();
  return testApp.app.inject({ url: `${FORMS}${qs ? `?${qs}` : ""}`, headers: { "api-key": key } });
}

async function listOk(key: string, query: Record<string, string> | string = "") {
  const res = await list(key, query);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

const ids = (items: { id: string }[]) => items.map((f) => f.id);
const byIdDesc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
const unprocessable = (message: string) => ({ error: { code: "unprocessable_entity", message } });

test("a list item has exactly the spec's members", async () => {
  const { fullKey, readKey } = await createTenant();
  const form = await create(fullKey, { name: "Shape", type: "hosted", isClosed: true });
  const body = await listOk(readKey);
  assert.deepEqual(body, {
    data: [
      {
        id: form.id,
        name: "Shape",
        type: "hosted",
        createdAt: form.createdAt,
        updatedAt: form.updatedAt,
        imageCompressionType: [],
        isClosed: true,
        submissions: 0,
        organizationId: form.organizationId,
      },
    ],
    meta: { total: 1 },
    pagination: { totalPages: 1, currentPage: 1, nextPage: null, previousPage: null },
  });
});

test("an organization without forms: no pages, no next or previous page", async () => {
  const { readKey } = await createTenant();
  assert.deepEqual(await listOk(readKey), {
    data: [],
    meta: { total: 0 },
    pagination: { totalPages: 0, currentPage: 1, nextPage: null, previousPage: null },
  });
});

test("meta.total counts only the forms matching type and search", async () => {
  const { fullKey, readKey } = await createTenant();
  const made = [];
  for (const [name, type] of [
    ["Alpha survey", "hosted"],
    ["alpha poll", "endpoint"],
    ["Beta survey", "hosted"],
    ["Gamma", "hosted"],
    ["delta", "endpoint"],
  ]) {
    made.push(await create(fullKey, { name, type }));
  }
  const expect = async (query: Record<string, string>, names: string[]) => {
    const body = await listOk(readKey, { ...query, pageSize: "1" });
    assert.deepEqual(body.meta, { total: names.length }, JSON.stringify(query));
    assert.equal(body.pagination.totalPages, names.length);
    const all = await listOk(readKey, query);
    assert.deepEqual(
      all.data.map((f: Form) => f.name).sort(),
      [...names].sort(),
      JSON.stringify(query),
    );
  };
  await expect(
    {},
    made.map((f) => f.name),
  );
  await expect({ type: "hosted" }, ["Alpha survey", "Beta survey", "Gamma"]);
  await expect({ type: "endpoint" }, ["alpha poll", "delta"]);
  await expect({ search: "ALPHA" }, ["Alpha survey", "alpha poll"]);
  await expect({ search: "survey", type: "hosted" }, ["Alpha survey", "Beta survey"]);
  await expect({ search: "survey", type: "endpoint" }, []);
  await expect({ search: "nothing like it" }, []);
});

test("search is a case-insensitive substring; % _ \\ ' \" match literally", async () => {
  const { fullKey, readKey } = await createTenant();
  const names = [
    "100% sure",
    "1000 sure",
    "a_b",
    "axb",
    "back\\slash",
    "backslash",
    "it's",
    'say "hi"',
    "UPPER case",
  ];
  for (const name of names) await create(fullKey, { name });
  const cases: [string, string[]][] = [
    ["%", ["100% sure"]],
    ["100%", ["100% sure"]],
    ["_", ["a_b"]],
    ["a_b", ["a_b"]],
    ["\\", ["back\\slash"]],
    ["k\\s", ["back\\slash"]],
    ["'", ["it's"]],
    ["it's", ["it's"]],
    ['"', ['say "hi"']],
    ["upper CASE", ["UPPER case"]],
    ["SURE", ["100% sure", "1000 sure"]],
    ["slash", ["back\\slash", "backslash"]],
    ["%%", []],
  ];
  for (const [search, expected] of cases) {
    const body = await listOk(readKey, { search });
    assert.deepEqual(body.data.map((f: Form) => f.name).sort(), [...expected].sort(), search);
    assert.deepEqual(body.meta, { total: expected.length }, search);
  }
});

describe("pagination over 23 forms", () => {
  const TOTAL = 23;
  let readKey: string;
  let forms: Form[];

  before(async () => {
    const tenant = await createTenant();
    readKey = tenant.readKey;
    forms = [];
    for (let i = 0; i < TOTAL; i++) forms.push(await create(tenant.fullKey, { name: `form ${i}` }));
  });

  async function allPages(query: Record<string, string>, pageSize: number) {
    const totalPages = Math.ceil(TOTAL / pageSize);
    const seen: string[] = [];
    for (let page = 1; page <= totalPages; page++) {
      const body = await listOk(readKey, {
        ...query,
        page: String(page),
        pageSize: String(pageSize),
      });
      assert.deepEqual(body.meta, { total: TOTAL });
      assert.deepEqual(body.pagination, {
        totalPages,
        currentPage: page,
        nextPage: page < totalPages ? page + 1 : null,
        previousPage: page > 1 ? page - 1 : null,
      });
      assert.equal(body.data.length, page < totalPages ? pageSize : TOTAL - pageSize * (page - 1));
      seen.push(...ids(body.data));
    }
    return seen;
  }

  test("pages of 5: every form exactly once, pagination per page", async () => {
    const seen = await allPages({}, 5);
    assert.equal(new Set(seen).size, seen.length, "no form repeats");
    assert.deepEqual([...seen].sort(), ids(forms).sort());
  });

  test("sort createdAt (the default): newest first, id breaking ties, stable across pages", async () => {
    const expected = [...forms]
      .sort((a, b) =>
        a.createdAt === b.createdAt ? byIdDesc(a.id, b.id) : a.createdAt < b.createdAt ? 1 : -1,
      )
      .map((f) => f.id);
    assert.deepEqual(await allPages({}, 5), expected);
    assert.deepEqual(await allPages({ sort: "createdAt" }, 5), expected);
    assert.deepEqual(await allPages({ sort: "createdAt" }, 7), expected);
  });

  test("sort submissions: all have 0, so the order is by id, descending", async () => {
    const expected = ids(forms).sort(byIdDesc);
    assert.deepEqual(await allPages({ sort: "submissions" }, 5), expected);
    assert.deepEqual(await allPages({ sort: "submissions" }, 4), expected);
  });

  test("default page size is 20", async () => {
    const body = await listOk(readKey);
    assert.equal(body.data.length, 20);
    assert.deepEqual(body.pagination, {
      totalPages: 2,
      currentPage: 1,
      nextPage: 2,
      previousPage: null,
    });
    const second = await listOk(readKey, { page: "2" });
    assert.equal(second.data.length, 3);
  });

  test("a page past the end → 200 with no data", async () => {
    assert.deepEqual(await listOk(readKey, { page: "6", pageSize: "5" }), {
      data: [],
      meta: { total: TOTAL },
      pagination: { totalPages: 5, currentPage: 6, nextPage: null, previousPage: 5 },
    });
    assert.deepEqual(await listOk(readKey, { page: "9007199254740991", pageSize: "100" }), {
      data: [],
      meta: { total: TOTAL },
      pagination: {
        totalPages: 1,
        currentPage: 9007199254740991,
        nextPage: null,
        previousPage: 9007199254740990,
      },
    });
  });
});

describe("query validation", () => {
  let readKey: string;

  before(async () => {
    readKey = (await createTenant()).readKey;
  });

  const notPositive = (name: string) =>
    unprocessable(`${name}: must be a whole number greater than 0`);
  const cases: [string, object][] = [];
  for (const name of ["page", "pageSize"]) {
    for (const value of ["0", "-1", "1.5", "1e3", "0x10", "abc", "", "01", " 1", "+1"]) {
      cases.push([`${name}=${encodeURIComponent(value)}`, notPositive(name)]);
    }
    cases.push([`${name}=1&${name}=2`, unprocessable(`${name}: must be given once`)]);
  }
  cases.push(
    ["page=9007199254740992", unprocessable("page: must be at most 9007199254740991")],
    ["page=99999999999999999999999", unprocessable("page: must be at most 9007199254740991")],
    ["pageSize=101", unprocessable("pageSize: must be at most 100")],
    ["type=other", unprocessable("type: must be one of endpoint, hosted")],
    ["type=", unprocessable("type: must be one of endpoint, hosted")],
    ["sort=name", unprocessable("sort: must be one of createdAt, submissions")],
    ["sort=createdat", unprocessable("sort: must be one of createdAt, submissions")],
    ["limit=5", unprocessable("limit: is not a known parameter")],
    ["search=a&search=b", unprocessable("search: must be given once")],
  );

  for (const [query, body] of cases) {
    test(`?${query} → 422`, async () => {
      const res = await list(readKey, query);
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json(), body);
    });
  }

  test("the largest page and pageSize are accepted", async () => {
    const body = await listOk(readKey, "page=9007199254740991&pageSize=100");
    assert.deepEqual(body.data, []);
    assert.equal(body.pagination.currentPage, 9007199254740991);
    assert.deepEqual((await listOk(readKey, "pageSize=1")).pagination.totalPages, 0);
  });
});
