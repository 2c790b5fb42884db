import assert from "node:assert/strict";
import { after, test } from "node:test";
import { startEventRelay } from "../../src/notifications/event-relay.ts";
import { closeTestDatabase } from "../helpers.ts";
import {
  addEvents,
  countsOverTime,
  formsWithoutRelay,
  relayEvents,
  saturated,
  silentLog,
  sleep,
} from "./relay-fixtures.ts";

after(closeTestDatabase);

for (const bound of ["instance", "form"] as const) {
  test(`while requests saturate the instance a pass relays one batch of 50, unless more events wait than it may defer (the ${bound}'s bound); eased, it relays them all at once`, async () => {
    const { db, forms } = await formsWithoutRelay(1);
    const formId = forms[0] as string;
    const { capacity, ease } = await saturated();
    const bounds =
      bound === "instance"
        ? { maxDeferred: 40, maxDeferredOfForm: 1_000 }
        : { maxDeferred: 1_000, maxDeferredOfForm: 40 };
    const relay = startEventRelay(db, relayEvents, silentLog, capacity, bounds);
    try {
      // 110 wait, more than the 40 it may defer: the first pass (once its wait of a second ends)
      // relays a batch, and a second since 60 still wait, then stops with 10 left (not more
      // than 40): those go the next pass, which waits its second after the first one's end.
      // (Counts are seen late, never early: the bounds below allow for that.)
      await addEvents(db, formId, 110);
      for (let i = 0; i < 110; i++) relay.wake(formId);
      const counts = await countsOverTime(db, formId, 4_500);
      const at = (n: number) => counts.find(([count]) => count === n)?.[1] ?? Number.NaN;
      assert.deepEqual(
        counts.map(([n]) => n).filter((n) => n !== 60),
        [110, 10, 0],
        `counts over time: ${JSON.stringify(counts)}`,
      );
      assert.ok(at(10) < 1_900, `the first pass took 100: ${JSON.stringify(counts)}`);
      assert.ok(at(0) >= 1_950, `the next pass came later: ${JSON.stringify(counts)}`);

      // Eased: a pass relays every batch at once.
      ease();
      await sleep(250);
      await addEvents(db, formId, 120);
      for (let i = 0; i < 120; i++) relay.wake(formId);
      const eased = await countsOverTime(db, formId, 2_000);
      assert.deepEqual(eased.at(-1)?.[0], 0, `eased: ${JSON.stringify(eased)}`);
      assert.ok((eased.at(-1)?.[1] ?? 2_000) < 600, `eased: ${JSON.stringify(eased)}`);
      const [records] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM email_records WHERE form_id = $1",
        [formId],
      );
      assert.equal(records?.n, 230, "every event relayed into its owner email record");
    } finally {
      await relay.stop();
      capacity.stop();
    }
  });
}

test("while requests saturate the instance, events spread over forms each within the form's bound wait: a batch a pass", async () => {
  const { db, forms } = await formsWithoutRelay(3);
  const { capacity } = await saturated();
  const relay = startEventRelay(db, relayEvents, silentLog, capacity, {
    maxDeferred: 1_000,
    maxDeferredOfForm: 40,
  });
  try {
    // 110 in all, 36 or 37 a form: no bound is passed, so each pass relays one batch of 50.
    const perForm = [36, 37, 37];
    for (const [i, formId] of forms.entries()) await addEvents(db, formId, perForm[i] ?? 0);
    for (const [i, formId] of forms.entries()) {
      for (let n = 0; n < (perForm[i] ?? 0); n++) relay.wake(formId);
    }
    const counts = await countsOverTime(db, forms, 4_500);
    assert.deepEqual(
      counts.map(([n]) => n),
      [110, 60, 10, 0],
      `counts over time: ${JSON.stringify(counts)}`,
    );
    // Each pass waits its second after the one before ends (counts are seen late, never early).
    const at = (n: number) => counts.find(([count]) => count === n)?.[1] ?? Number.NaN;
    assert.ok(at(10) >= 1_950, `a pass a second: ${JSON.stringify(counts)}`);
    assert.ok(at(0) >= 2_950, `a pass a second: ${JSON.stringify(counts)}`);
  } finally {
    await relay.stop();
    capacity.stop();
  }
});
