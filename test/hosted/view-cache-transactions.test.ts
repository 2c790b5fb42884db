import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { FormViewCache } from "../../src/hosted/form-view-cache.ts";
import { findIntakeForm } from "../../src/intake/intake.repository.ts";
import { useTestApp } from "../helpers.ts";
import { newForm } from "../intake/intake-fixtures.ts";
import { SAMPLE_FORM } from "./sample-form.ts";

const databaseUrl = process.env.DATABASE_URL;
const built = useTestApp();

/** A session holding a transaction open on `database` (this one's when null), with an id if `writing`. */
async function openTransaction(database: string | null, writing: boolean) {
  const url = new URL(databaseUrl as string);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await client.query("BEGIN");
  await client.query(writing ? "SELECT pg_current_xact_id()" : "SELECT 1");
  let ended = false;
  return {
    end: async () => {
      if (ended) return;
      ended = true;
      await client.query("COMMIT");
      await client.end();
    },
  };
}

test("on PostgreSQL, the form cache waits for this database's open transactions, not for another's", {
  skip: !databaseUrl && "needs PostgreSQL: the embedded store has no other sessions",
}, async () => {
  const form = await newForm(built.app, SAMPLE_FORM);
  let loads = 0;
  const load = () => {
    loads++;
    return findIntakeForm(built.db, form.id, new Date());
  };
  /** How many of two views of the form read the store. */
  const readsOfTwoViews = async () => {
    const before = loads;
    await cache.form(form.id, load);
    await cache.form(form.id, load);
    return loads - before;
  };
  // `postgres` exists on every server: a long writing transaction there touches no form of ours.
  const elsewhere = await openTransaction("postgres", true);
  const here = await openTransaction(null, false);
  const cache = new FormViewCache(built.db);
  try {
    await sleep(500);
    assert.equal(await readsOfTwoViews(), 2, "a transaction open here at connection: no keeping");
    await here.end();
    let tries = 0;
    while ((await readsOfTwoViews()) === 2 && tries++ < 60) await sleep(50);
    assert.equal(await readsOfTwoViews(), 0, "once it ended, views are answered from memory");
  } finally {
    await Promise.all([here.end(), elsewhere.end()]);
    await cache.close();
  }
});
