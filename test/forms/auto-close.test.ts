import assert from "node:assert/strict";
import { after, before, describe, type TestContext, test } from "node:test";
import { autoCloseInstant } from "../../src/forms/auto-close.ts";
import {
  type ClosingChange,
  type ClosingState,
  nextClosingState,
} from "../../src/forms/closing.ts";
import { closeDueForms } from "../../src/forms/forms.repository.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { type Body, type Client, client, expectedForm, listItemOf } from "./form-fixtures.ts";

const MINUTE = 60_000;

/** Auto-close at `instant` (a whole minute), written as its wall time in UTC or another zone. */
function deadlineAt(instant: number, zone = "UTC", offsetMs = 0): Body {
  const wall = new Date(instant + offsetMs).toISOString();
  return {
    autoCloseEnabled: true,
    autoCloseDate: wall.slice(0, 10),
    autoCloseTime: wall.slice(11, 16),
    autoCloseTimezone: zone,
  };
}

/**
 * A whole minute two to three minutes before the real clock. The tests move the service's clock
 * (`Date`, mocked) around it, so they watch the exact instant without sleeping, and every time
 * they hand to the background pass has already passed for every other test sharing the store.
 */
const recentMinute = () => Math.floor(Date.now() / MINUTE) * MINUTE - 2 * MINUTE;

let built: Awaited<ReturnType<typeof buildTestApp>>;
let api: Client;
let orgId: string;

before(async () => {
  built = await buildTestApp();
  const tenant = await createTenant("paid");
  api = client(built.app, tenant.fullKey);
  orgId = tenant.org.id;
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

/** The form as GET and the list read it. */
async function reads(id: string, name: string) {
  const form = await api.getOk(id);
  assert.deepEqual(await api.listed(id, name), listItemOf(form));
  return form;
}

function clockAt(t: TestContext, now: number) {
  t.mock.timers.enable({ apis: ["Date"], now });
  return {
    to(instant: number) {
      t.mock.timers.tick(instant - Date.now());
      assert.equal(Date.now(), instant);
    },
  };
}

describe("auto-close through the API", () => {
  test("a deadline already past on create reads closed at once", async () => {
    for (const deadline of [
      { autoCloseDate: "2020-01-01", autoCloseTime: "00:00", autoCloseTimezone: "UTC" },
      deadlineAt(recentMinute() + 2 * MINUTE, "UTC"), // the current minute, just begun
      { autoCloseDate: "2024-06-01", autoCloseTime: "23:30", autoCloseTimezone: "Asia/Kolkata" },
    ]) {
      const body = { name: "Past deadline", autoCloseEnabled: true, ...deadline };
      const form = await api.createOk(body);
      assert.deepEqual(form, expectedForm(form, { ...body, isClosed: true }, orgId));
      assert.deepEqual(await reads(form.id, "Past deadline"), form);
    }
  });

  test("a future deadline leaves it open; without autoCloseEnabled a past one does nothing", async () => {
    const future = { name: "Future deadline", ...deadlineAt(Date.UTC(2099, 0, 1)) };
    const open = await api.createOk(future);
    assert.deepEqual(open, expectedForm(open, future, orgId));
    const off = { ...deadlineAt(Date.UTC(2020, 0, 1)), name: "Disabled", autoCloseEnabled: false };
    const stillOpen = await api.createOk(off);
    assert.deepEqual(stillOpen, expectedForm(stillOpen, off, orgId));
    assert.deepEqual(await reads(stillOpen.id, "Disabled"), stillOpen);
  });

  for (const [zone, offset] of [
    ["UTC", 0],
    ["Asia/Kolkata", 5.5 * 60 * MINUTE],
  ] as const) {
    test(`reads open before and closed from the instant on (${zone})`, async (t) => {
      const deadline = recentMinute();
      const clock = clockAt(t, deadline - 2_500);
      const name = `Closes at the instant ${zone}`;
      const body = { name, ...deadlineAt(deadline, zone, offset) };
      const created = await api.createOk(body);
      assert.deepEqual(created, expectedForm(created, body, orgId));
      assert.deepEqual(await reads(created.id, name), created);
      clock.to(deadline - 1);
      assert.deepEqual(await reads(created.id, name), created);
      clock.to(deadline);
      const closed = { ...created, isClosed: true };
      assert.deepEqual(await reads(created.id, name), closed);
      clock.to(deadline + 45_000);
      assert.deepEqual(await reads(created.id, name), closed);
    });
  }

  test("reopening after it fired keeps it open, also after the background pass", async (t) => {
    const deadline = recentMinute();
    const clock = clockAt(t, deadline - 1_000);
    const reopen = await api.createOk({ name: "Reopened", ...deadlineAt(deadline) });
    const stays = await api.createOk({ name: "Stays closed", ...deadlineAt(deadline) });
    clock.to(deadline + 1_000);
    assert.equal((await reads(reopen.id, "Reopened")).isClosed, true);

    const reopened = await api.updateOk(reopen.id, { isClosed: false });
    assert.deepEqual(reopened, { ...reopen, updatedAt: reopened.updatedAt });
    clock.to(deadline + 30_000);
    assert.deepEqual(await reads(reopen.id, "Reopened"), reopened);

    // The background pass stores what the clock has decided, and nothing more.
    assert.ok((await closeDueForms(built.db, new Date())) >= 1);
    assert.deepEqual(await reads(reopen.id, "Reopened"), reopened);
    assert.deepEqual(await reads(stays.id, "Stays closed"), { ...stays, isClosed: true });

    // The same deadline sent again, or auto-close re-enabled alone, does not close it again.
    const resent = await api.updateOk(reopen.id, { ...deadlineAt(deadline), tpHeader: "again" });
    assert.deepEqual(resent, { ...reopened, tpHeader: "again", updatedAt: resent.updatedAt });
    const enabled = await api.updateOk(reopen.id, { autoCloseEnabled: true });
    assert.equal(enabled.isClosed, false);
    clock.to(deadline + 50_000);
    assert.deepEqual(await reads(reopen.id, "Reopened"), enabled);

    // A fired form that is reopened after the pass stays open too.
    const alsoReopened = await api.updateOk(stays.id, { isClosed: false });
    assert.equal(alsoReopened.isClosed, false);
    await closeDueForms(built.db, new Date());
    assert.deepEqual(await reads(stays.id, "Stays closed"), alsoReopened);
  });

  test("a new future deadline re-arms a reopened form", async (t) => {
    const first = recentMinute();
    const clock = clockAt(t, first + 1_000);
    const form = await api.createOk({ name: "Re-armed", ...deadlineAt(first) });
    assert.equal(form.isClosed, true);
    const reopened = await api.updateOk(form.id, { isClosed: false });
    const second = first + MINUTE;
    const rearmed = await api.updateOk(form.id, deadlineAt(second));
    assert.deepEqual(rearmed, { ...reopened, ...deadlineAt(second), updatedAt: rearmed.updatedAt });
    clock.to(second - 1);
    assert.deepEqual(await reads(form.id, "Re-armed"), rearmed);
    clock.to(second);
    assert.deepEqual(await reads(form.id, "Re-armed"), { ...rearmed, isClosed: true });
  });

  test("a new deadline already past closes at once, unless isClosed: false comes with it", async () => {
    const past = deadlineAt(Date.UTC(2021, 5, 1, 8, 0), "Europe/Berlin");
    const form = await api.createOk({ name: "Past on update" });
    const closed = await api.updateOk(form.id, past);
    assert.deepEqual(closed, { ...form, ...past, isClosed: true, updatedAt: closed.updatedAt });
    assert.deepEqual(await reads(form.id, "Past on update"), closed);
    const reopened = await api.updateOk(form.id, { isClosed: false });
    assert.deepEqual(await reads(form.id, "Past on update"), reopened);
    assert.equal(reopened.isClosed, false);

    const other = await api.createOk({ name: "Past but open" });
    const open = await api.updateOk(other.id, { ...past, isClosed: false });
    assert.deepEqual(open, { ...other, ...past, updatedAt: open.updatedAt });
    assert.deepEqual(await reads(other.id, "Past but open"), open);
  });

  test("turning auto-close off, or moving the deadline later, disarms it", async (t) => {
    const deadline = recentMinute();
    const clock = clockAt(t, deadline - 5_000);
    const off = await api.createOk({ name: "Disarmed", ...deadlineAt(deadline) });
    const moved = await api.createOk({ name: "Moved", ...deadlineAt(deadline) });
    await api.updateOk(off.id, { autoCloseEnabled: false });
    await api.updateOk(moved.id, deadlineAt(deadline + MINUTE));
    clock.to(deadline);
    assert.equal((await reads(off.id, "Disarmed")).isClosed, false);
    assert.equal((await reads(moved.id, "Moved")).isClosed, false);
    clock.to(deadline + MINUTE);
    assert.equal((await reads(moved.id, "Moved")).isClosed, true);
  });
});

describe("autoCloseInstant", () => {
  const at = (date: string, time: string, zone: string, enabled = true) =>
    autoCloseInstant({
      autoCloseEnabled: enabled,
      autoCloseDate: date,
      autoCloseTime: time,
      autoCloseTimezone: zone,
    })?.toISOString() ?? null;

  test("reads the wall time in the zone's offset of that day", () => {
    assert.equal(at("2026-07-01", "12:00", "UTC"), "2026-07-01T12:00:00.000Z");
    assert.equal(at("2026-07-01", "12:00", "Europe/Berlin"), "2026-07-01T10:00:00.000Z");
    assert.equal(at("2026-01-15", "12:00", "Europe/Berlin"), "2026-01-15T11:00:00.000Z");
    assert.equal(at("2026-03-10", "09:30", "Asia/Kolkata"), "2026-03-10T04:00:00.000Z");
    assert.equal(at("2026-01-01", "00:15", "Asia/Kolkata"), "2025-12-31T18:45:00.000Z");
    assert.equal(at("2026-07-04", "20:00", "America/New_York"), "2026-07-05T00:00:00.000Z");
    assert.equal(at("2026-12-31", "23:59", "Pacific/Kiritimati"), "2026-12-31T09:59:00.000Z");
    assert.equal(at("2028-02-29", "00:00", "UTC"), "2028-02-29T00:00:00.000Z");
    // Years below 100 are themselves, not 1900 to 1999.
    assert.equal(at("0050-06-01", "10:00", "UTC"), "0050-06-01T10:00:00.000Z");
  });

  test("a time the spring-forward gap skips lands just after the gap", () => {
    // Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist.
    assert.equal(at("2026-03-29", "02:30", "Europe/Berlin"), "2026-03-29T01:30:00.000Z");
    assert.equal(at("2026-03-29", "01:59", "Europe/Berlin"), "2026-03-29T00:59:00.000Z");
    assert.equal(at("2026-03-29", "03:00", "Europe/Berlin"), "2026-03-29T01:00:00.000Z");
    // New York, 2026-03-08: 02:00 EST becomes 03:00 EDT.
    assert.equal(at("2026-03-08", "02:30", "America/New_York"), "2026-03-08T07:30:00.000Z");
  });

  test("a time that occurs twice when clocks go back is its first occurrence", () => {
    // Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens at 00:30Z and 01:30Z.
    assert.equal(at("2026-10-25", "02:30", "Europe/Berlin"), "2026-10-25T00:30:00.000Z");
    assert.equal(at("2026-10-25", "03:00", "Europe/Berlin"), "2026-10-25T02:00:00.000Z");
    // New York, 2026-11-01: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST).
    assert.equal(at("2026-11-01", "01:30", "America/New_York"), "2026-11-01T05:30:00.000Z");
  });

  test("is null when auto-close is off or not fully set", () => {
    assert.equal(at("2026-07-01", "12:00", "UTC", false), null);
    assert.equal(at("", "12:00", "UTC"), null);
    assert.equal(at("2026-07-01", "", "UTC"), null);
    assert.equal(at("2026-07-01", "12:00", ""), null);
  });
});

describe("nextClosingState", () => {
  const now = new Date("2026-05-01T12:00:00.000Z");
  const past = new Date(now.getTime() - 1);
  const future = new Date(now.getTime() + 1);
  const open = (autoCloseAt: Date | null) => ({ isClosed: false, autoCloseAt });
  const closed = (autoCloseAt: Date | null) => ({ isClosed: true, autoCloseAt });
  type Case = [string, ClosingState, ClosingChange, ClosingState];
  const cases: Case[] = [
    ["nothing to do", open(null), {}, open(null)],
    ["a future deadline waits", open(future), {}, open(future)],
    ["a passed deadline fires once", open(past), {}, closed(null)],
    ["a deadline fires at its instant", open(now), {}, closed(null)],
    ["reopening after it fired", open(past), { isClosed: false }, open(null)],
    ["reopening after the pass", closed(null), { isClosed: false }, open(null)],
    ["closing keeps a future deadline", open(future), { isClosed: true }, closed(future)],
    ["a new future deadline re-arms", open(null), { deadline: future }, open(future)],
    ["a new past deadline fires at once", open(null), { deadline: past }, closed(null)],
    ["isClosed has the last word", open(null), { deadline: past, isClosed: false }, open(null)],
    ["removing the deadline", open(future), { deadline: null }, open(null)],
    ["a fired deadline, then a new one", open(past), { deadline: future }, closed(future)],
  ];
  for (const [name, state, change, expected] of cases) {
    test(name, () => assert.deepEqual(nextClosingState(state, change, now), expected));
  }
});
