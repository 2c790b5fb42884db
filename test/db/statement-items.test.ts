import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Database } from "../../src/db/database.ts";
import { isoText } from "../../src/db/statement-items.ts";
import { closeTestDatabase, testDatabase } from "../helpers.ts";

let db: Database;
before(async () => {
  db = await testDatabase();
});
after(closeTestDatabase);

/** Date.UTC, except that years 0 to 99 stay themselves instead of becoming 1900 to 1999. */
function utc(year: number, month: number, day: number) {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  return date.getTime();
}

test("isoText: every instant a form can hold reads back as itself, alone and inside an array", async () => {
  const instants = [
    new Date("2026-11-29T02:45:00.123Z"),
    new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
    // Past year 9999 in UTC: a deadline on 9999-12-31 in a zone west of UTC.
    new Date(Date.UTC(10000, 0, 1, 10, 59)),
    // Before year 1: year 0 is 1 BC, year -1 is 2 BC.
    new Date(utc(0, 0, 1) - 3_600_000),
    new Date(utc(-1, 5, 15)),
    new Date(utc(1, 0, 1)),
  ];
  const texts = instants.map(isoText);
  assert.deepEqual(texts.slice(2, 5), [
    "10000-01-01T10:59:00.000Z",
    "0002-12-31T23:00:00.000Z BC",
    "0002-06-15T00:00:00.000Z BC",
  ]);
  const alone = [];
  for (const text of texts) {
    const rows = await db.query<{ ms: string }>(
      "SELECT (extract(epoch FROM $1::timestamptz) * 1000)::int8::text AS ms",
      [text],
    );
    alone.push(Number(rows[0]?.ms));
  }
  const inArray = await db.query<{ ms: string }>(
    `SELECT (extract(epoch FROM t::timestamptz) * 1000)::int8::text AS ms
       FROM unnest($1::text[]) WITH ORDINALITY AS item (t, n) ORDER BY n`,
    [texts],
  );
  const times = instants.map((instant) => instant.getTime());
  assert.deepEqual(alone, times);
  assert.deepEqual(
    inArray.map((row) => Number(row.ms)),
    times,
  );
  assert.equal(isoText(null), null);
});
