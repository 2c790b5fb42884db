import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { type Client, client } from "./form-fixtures.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;
let api: Client;

before(async () => {
  built = await buildTestApp();
  api = client(built.app, (await createTenant()).fullKey);
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

// The same words in the two forms of Unicode: é as one code point (NFC), and as e + U+0301 (NFD).
const COMPOSED = "Café Crème \u00c9T\u00c9";
const DECOMPOSED = "Cafe\u0301 Cre\u0300me E\u0301TE\u0301";

/** The names a search finds, in the order listed (newest first), and its total. */
async function found(term: string) {
  const res = await api.list(`?search=${encodeURIComponent(term)}&pageSize=100`);
  assert.equal(res.status, 200, res.text);
  return {
    names: res.body.data.map((item: { name: string }) => item.name),
    total: res.body.meta.total,
  };
}

test("a search matches names across Unicode normalization, both ways, and returns them as sent", async () => {
  const composed = await api.createOk({ name: COMPOSED });
  const decomposed = await api.createOk({ name: DECOMPOSED });
  await api.createOk({ name: "Cafe Creme" });
  // Stored and read back exactly as sent, not normalized.
  assert.equal((await api.getOk(composed.id)).name, COMPOSED);
  assert.equal((await api.getOk(decomposed.id)).name, DECOMPOSED);
  const both = { names: [DECOMPOSED, COMPOSED], total: 2 };
  for (const term of [
    "Café",
    "Cafe\u0301",
    "café crème",
    "cafe\u0301 cre\u0300me",
    "\u00e9t\u00e9",
    "e\u0301te\u0301",
  ]) {
    assert.deepEqual(await found(term), both, JSON.stringify(term));
  }
});

test("a search is case-insensitive beyond ASCII, in either normalization form", async () => {
  const form = await api.createOk({ name: "Été à Zürich" });
  for (const term of ["ÉTÉ À ZÜRICH", "E\u0301TE\u0301 A\u0300 ZU\u0308RICH", "été à zürich"]) {
    assert.deepEqual(await found(term), { names: [form.name], total: 1 }, JSON.stringify(term));
  }
  // Accents still count: a letter without one is another letter.
  assert.deepEqual(await found("Ete a Zurich"), { names: [], total: 0 });
});

test("the search's filter is served by the trigram index on the normalized name", async () => {
  const plan = await built.db.transaction(async (tx) => {
    // A table this small would be scanned; the question is whether the index can serve it.
    await tx.query("SET LOCAL enable_seqscan = off");
    return tx.query<{ "QUERY PLAN": string }>(
      "EXPLAIN SELECT id FROM forms WHERE normalize(name, NFC) ILIKE '%café%'",
    );
  });
  const text = plan.map((row) => row["QUERY PLAN"]).join("\n");
  assert.match(text, /Bitmap Index Scan on forms_name_nfc_trigrams/, text);
});
