import assert from "node:assert/strict";
import { test } from "node:test";
import { startAutoCloseSweep } from "../../src/forms/auto-close-sweep.ts";
import { createTenant, useTestApp } from "../helpers.ts";
import { client, sleep } from "./form-fixtures.ts";

const built = useTestApp();

const silent = { info() {}, warn() {} } as unknown as Parameters<typeof startAutoCloseSweep>[2];

const stored = async (id: string) =>
  (
    await built.db.query<{ isClosed: boolean; autoCloseAt: Date | null }>(
      `SELECT is_closed AS "isClosed", auto_close_at AS "autoCloseAt" FROM forms WHERE id = $1`,
      [id],
    )
  )[0];

test("the background pass writes down a deadline that has passed, and leaves future ones armed", async () => {
  const { fullKey } = await createTenant("paid");
  const api = client(built.app, fullKey);
  const deadline = { autoCloseEnabled: true, autoCloseTime: "12:00", autoCloseTimezone: "UTC" };
  const alreadyPast = await api.create({ name: "late", ...deadline, autoCloseDate: "2020-01-01" });
  assert.equal(alreadyPast.body.isClosed, true);
  assert.deepEqual(
    await stored(alreadyPast.body.id),
    { isClosed: true, autoCloseAt: null },
    "a deadline already past when written fires at once",
  );
  const created = await api.create({ name: "past", ...deadline, autoCloseDate: "2998-01-01" });
  const future = await api.create({ name: "future", ...deadline, autoCloseDate: "2999-01-01" });
  // Time passes: the first deadline is now behind us, and reads count the form closed.
  await built.db.query("UPDATE forms SET auto_close_at = $2 WHERE id = $1", [
    created.body.id,
    new Date("2020-01-01T12:00:00.000Z"),
  ]);
  const past = await api.get(created.body.id);
  assert.equal(past.body.isClosed, true);
  assert.deepEqual(await stored(past.body.id), {
    isClosed: false,
    autoCloseAt: new Date("2020-01-01T12:00:00.000Z"),
  });

  const sweep = startAutoCloseSweep(built.db, 10, silent);
  await sleep(200);
  await sweep.stop();

  assert.deepEqual(await stored(past.body.id), { isClosed: true, autoCloseAt: null });
  assert.deepEqual(await stored(future.body.id), {
    isClosed: false,
    autoCloseAt: new Date("2999-01-01T12:00:00.000Z"),
  });
  const read = await api.get(past.body.id);
  assert.deepEqual(read.body, past.body, "writing it down changes nothing clients see");
});
