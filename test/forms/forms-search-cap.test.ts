import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { seedForms } from "../../bench/seed-forms.ts";
import { SEARCH_MATCH_CAP } from "../../src/forms/form-list.repository.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";

const FORMS = "/api/v1/forms";
// Every seeded name contains "form"; five contain "zephyr".
const SEEDED = SEARCH_MATCH_CAP + 50;

let testApp: Awaited<ReturnType<typeof buildTestApp>>;
let readKey: string;

async function list(query: string) {
  const reply = await testApp.app.inject({
    url: `${FORMS}?${query}`,
    headers: { "api-key": readKey },
  });
  return { status: reply.statusCode, body: reply.json() };
}

before(async () => {
  testApp = await buildTestApp();
  const tenant = await createTenant();
  readKey = tenant.readKey;
  await seedForms(testApp.db, tenant.org.id, SEEDED);
});

after(async () => {
  await testApp?.close();
  await closeTestDatabase();
});

test("a search counts at most 10,000 matches and says so in meta", async () => {
  const first = await list("search=form&pageSize=100&sort=submissions");
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.meta, { total: SEARCH_MATCH_CAP, totalCapped: true });
  assert.deepEqual(first.body.pagination, {
    totalPages: 100,
    currentPage: 1,
    nextPage: 2,
    previousPage: null,
  });
  const submissions = first.body.data.map((form: { submissions: number }) => form.submissions);
  assert.deepEqual(
    submissions,
    [...submissions].sort((a, b) => b - a),
  );
  // The pages within the cap are pages of every match, in order: the last one is full.
  const last = await list("search=form&pageSize=100&page=100");
  assert.equal(last.status, 200);
  assert.equal(last.body.data.length, 100);
  assert.deepEqual(last.body.pagination.nextPage, null);
});

test("a page past a capped search's first 10,000 matches is a 422 naming page", async () => {
  for (const query of [
    "search=form&pageSize=100&page=101",
    "search=FORM&page=1990&pageSize=100&sort=submissions",
  ]) {
    const reply = await list(query);
    assert.deepEqual(reply, {
      status: 422,
      body: {
        error: {
          code: "unprocessable_entity",
          message:
            "page: a search lists only its first 10000 matches, up to page 100 at pageSize 100; narrow the search",
        },
      },
    });
  }
  const small = await list("search=form&pageSize=7&page=1430");
  assert.equal(small.status, 422);
  assert.match(small.body.error.message, /up to page 1429 at pageSize 7;/);
});

test("a search with fewer matches, and a list without search, count exactly", async () => {
  const rare = await list("search=zephyr&page=9007199254740991");
  assert.deepEqual([rare.status, rare.body.meta, rare.body.data], [200, { total: 5 }, []]);
  const all = await list("pageSize=100&page=101");
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.meta, { total: SEEDED });
  assert.equal(all.body.data.length, 50);
});
