import assert from "node:assert/strict";
import { test } from "node:test";
import { createTenant, testDatabase, useTestApp } from "../helpers.ts";

// Totals come from counts kept as forms are written; these tests hold them to count(*).

const FORMS = "/api/v1/forms";
const testApp = useTestApp();

async function totals(key: string) {
  const total = async (query: string) => {
    const res = await testApp.app.inject({ url: `${FORMS}${query}`, headers: { "api-key": key } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().meta.total as number;
  };
  return {
    all: await total(""),
    endpoint: await total("?type=endpoint"),
    hosted: await total("?type=hosted"),
  };
}

async function counted(organizationId: string) {
  const rows = await (await testDatabase()).query<{ type: string; n: number }>(
    "SELECT type, count(*)::int AS n FROM forms WHERE organization_id = $1 GROUP BY type",
    [organizationId],
  );
  const of = (type: string) => rows.find((row) => row.type === type)?.n ?? 0;
  return { all: of("endpoint") + of("hosted"), endpoint: of("endpoint"), hosted: of("hosted") };
}

const create = (key: string, type: string, name = `${type} form`) =>
  testApp.app.inject({
    method: "POST",
    url: FORMS,
    headers: { "api-key": key },
    payload: { name, type },
  });

test("totals follow concurrent creates and deletes, per type", async () => {
  const tenant = await createTenant();
  const created = await Promise.all(
    Array.from({ length: 30 }, (_, i) => create(tenant.fullKey, i % 3 ? "endpoint" : "hosted")),
  );
  assert.deepEqual(
    created.map((res) => res.statusCode),
    created.map(() => 201),
  );
  assert.deepEqual(await totals(tenant.readKey), { all: 30, endpoint: 20, hosted: 10 });
  const deleted = await Promise.all(
    created.slice(0, 7).map((res) =>
      testApp.app.inject({
        method: "DELETE",
        url: `${FORMS}/${res.json().id}`,
        headers: { "api-key": tenant.fullKey },
      }),
    ),
  );
  assert.deepEqual(
    deleted.map((res) => res.statusCode),
    deleted.map(() => 204),
  );
  assert.deepEqual(await totals(tenant.readKey), await counted(tenant.org.id));
  assert.deepEqual(await totals(tenant.readKey), { all: 23, endpoint: 16, hosted: 7 });
});

test("a refused create and a failed delete leave the totals alone", async () => {
  const tenant = await createTenant();
  assert.equal((await create(tenant.fullKey, "hosted")).statusCode, 201);
  assert.equal((await create(tenant.fullKey, "webhook")).statusCode, 422);
  const missing = await testApp.app.inject({
    method: "DELETE",
    url: `${FORMS}/form_AAAAAAAAAAAAAAAAAAAAAA`,
    headers: { "api-key": tenant.fullKey },
  });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(await totals(tenant.readKey), { all: 1, endpoint: 0, hosted: 1 });
});

test("rows written in bulk, outside the API, are counted too", async () => {
  const tenant = await createTenant();
  const db = await testDatabase();
  await db.query(
    `INSERT INTO forms (id, organization_id, name, type, is_closed, settings, created_at, updated_at)
     SELECT 'form_' || substr(md5($1 || n), 1, 22), $1,
            'bulk ' || n, CASE WHEN n % 4 = 0 THEN 'hosted' ELSE 'endpoint' END, false, '{}',
            now(), now()
       FROM generate_series(1, 200) AS n`,
    [tenant.org.id],
  );
  assert.deepEqual(await totals(tenant.readKey), { all: 200, endpoint: 150, hosted: 50 });
  await db.query("DELETE FROM forms WHERE organization_id = $1 AND type = 'hosted'", [
    tenant.org.id,
  ]);
  assert.deepEqual(await totals(tenant.readKey), { all: 150, endpoint: 150, hosted: 0 });
  assert.deepEqual(await totals(tenant.readKey), await counted(tenant.org.id));
});

test("a search counts its matches, not the kept totals", async () => {
  const tenant = await createTenant();
  for (const name of ["Alpha survey", "alphabet", "Beta", "ALPHA hosted"]) {
    assert.equal(
      (await create(tenant.fullKey, name.includes("hosted") ? "hosted" : "endpoint", name))
        .statusCode,
      201,
    );
  }
  const res = await testApp.app.inject({
    url: `${FORMS}?search=alpha&type=endpoint`,
    headers: { "api-key": tenant.readKey },
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().meta.total, 2);
  assert.deepEqual(
    res
      .json()
      .data.map((form: { name: string }) => form.name)
      .sort(),
    ["Alpha survey", "alphabet"],
  );
});
