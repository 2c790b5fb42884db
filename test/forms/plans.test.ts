import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { changePlan } from "../../src/admin/admin.service.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import {
  assertCreateRefused,
  assertUpdateRefused,
  type Client,
  client,
  errorOf,
  expectedForm,
  freeAndPaidClients,
  MISSING_ID,
  NOT_FOUND,
  unprocessable,
} from "./form-fixtures.ts";

const PAID_SETTINGS = [
  "sendRespondentEmailNotifications",
  "useCustomRedirect",
  "autoCloseEnabled",
] as const;
const needsPaid = (member: string) => errorOf("forbidden", `${member}: needs the paid plan`);

let built: Awaited<ReturnType<typeof buildTestApp>>;
let free: Client;
let paid: Client;
let freeOrg: string;
let paidOrg: string;

before(async () => {
  built = await buildTestApp();
  ({ free, paid, freeOrg, paidOrg } = await freeAndPaidClients(built.app));
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

describe("free plan", () => {
  for (const member of PAID_SETTINGS) {
    test(`${member}: true on create is a 403 and stores nothing`, () =>
      assertCreateRefused(free, { name: "Paid thing", [member]: true }, needsPaid(member), 403));

    test(`${member}: true on update is a 403 and changes nothing`, async () => {
      const form = await free.createOk({ name: `Free form for ${member}` });
      await assertUpdateRefused(free, form.id, { [member]: true }, needsPaid(member), 403);
      // Nothing else in the same request is applied either.
      const body = { name: "renamed", tpHeader: "changed", [member]: true };
      await assertUpdateRefused(free, form.id, body, needsPaid(member), 403);
    });

    test(`${member}: false is allowed on create and update`, async () => {
      const body = { name: `Free with ${member} off`, [member]: false };
      const form = await free.createOk(body);
      assert.deepEqual(form, expectedForm(form, body, freeOrg));
      const updated = await free.updateOk(form.id, { [member]: false, tpHeader: "ok" });
      assert.deepEqual(updated, { ...form, tpHeader: "ok", updatedAt: updated.updatedAt });
    });
  }

  test("the auto-close details without autoCloseEnabled need no plan", async () => {
    const body = {
      name: "Details only",
      autoCloseDate: "2099-01-01",
      autoCloseTime: "10:00",
      autoCloseTimezone: "UTC",
      customSuccessUrl: "https://example.com/thanks",
      respondentEmailSubject: "Hi",
    };
    const form = await free.createOk(body);
    assert.deepEqual(form, expectedForm(form, body, freeOrg));
  });

  test("a missing form is a 404 before the plan's 403", async () => {
    for (const member of PAID_SETTINGS) {
      const res = await free.update(MISSING_ID, { [member]: true });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 404, body: NOT_FOUND });
    }
  });

  test("a 422 comes before the plan's 403", async () => {
    await assertCreateRefused(
      free,
      { useCustomRedirect: true },
      unprocessable("name: is required"),
    );
    await assertCreateRefused(
      free,
      { name: "x", useCustomRedirect: true, customSuccessUrl: "ftp://example.com" },
      unprocessable("customSuccessUrl: must be an absolute http or https URL"),
    );
    const form = await free.createOk({ name: "Order of checks" });
    await assertUpdateRefused(
      free,
      form.id,
      { autoCloseEnabled: true, autoCloseTime: "25:00" },
      unprocessable("autoCloseTime: must be a time in the form HH:mm"),
    );
    await assertUpdateRefused(
      free,
      form.id,
      { sendRespondentEmailNotifications: true, type: "hosted" },
      unprocessable("type: is not allowed"),
    );
  });
});

describe("paid plan", () => {
  test("accepts the paid settings on create", async () => {
    const body = {
      name: "All paid",
      sendRespondentEmailNotifications: true,
      useCustomRedirect: true,
      customSuccessUrl: "https://example.com/done",
      autoCloseEnabled: true,
      autoCloseDate: "2099-06-30",
      autoCloseTime: "18:00",
      autoCloseTimezone: "Europe/Berlin",
    };
    const res = await paid.create(body);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, expectedForm(res.body, body, paidOrg));
    assert.deepEqual(await paid.getOk(res.body.id), res.body);
  });

  test("accepts each paid setting on update, and turning it off again", async () => {
    const form = await paid.createOk({ name: "Paid updates" });
    let previous = form;
    for (const member of PAID_SETTINGS) {
      const on = await paid.updateOk(form.id, { [member]: true });
      assert.deepEqual(on, { ...previous, [member]: true, updatedAt: on.updatedAt });
      previous = on;
    }
    const off = await paid.updateOk(
      form.id,
      Object.fromEntries(PAID_SETTINGS.map((m) => [m, false])),
    );
    assert.deepEqual(off, { ...form, updatedAt: off.updatedAt });
  });
});

describe("changing the plan", () => {
  test("takes effect on the next request, both ways", async () => {
    const tenant = await createTenant("free");
    const api = client(built.app, tenant.fullKey);
    const form = await api.createOk({ name: "Plan changes" });
    await assertUpdateRefused(
      api,
      form.id,
      { useCustomRedirect: true },
      needsPaid("useCustomRedirect"),
      403,
    );

    await changePlan(built.db, tenant.org.id, "paid");
    const upgraded = await api.updateOk(form.id, { useCustomRedirect: true });
    assert.deepEqual(upgraded, { ...form, useCustomRedirect: true, updatedAt: upgraded.updatedAt });
    const created = await api.createOk({ name: "Created on paid", autoCloseEnabled: true });
    assert.equal(created.autoCloseEnabled, true);

    await changePlan(built.db, tenant.org.id, "free");
    const body = { name: "Refused on free again", sendRespondentEmailNotifications: true };
    await assertCreateRefused(api, body, needsPaid("sendRespondentEmailNotifications"), 403);
    await assertUpdateRefused(
      api,
      form.id,
      { autoCloseEnabled: true },
      needsPaid("autoCloseEnabled"),
      403,
    );
    // A setting turned on while paid stays as it is; turning it off is allowed.
    assert.equal((await api.getOk(form.id)).useCustomRedirect, true);
    const off = await api.updateOk(form.id, { useCustomRedirect: false });
    assert.equal(off.useCustomRedirect, false);
  });
});

describe("a paid setting turned on before a downgrade", () => {
  const ON = {
    sendRespondentEmailNotifications: true,
    respondentEmailFromName: "Shop",
    respondentEmailSubject: "Thanks",
    respondentEmailMessageHTML: "<p>Thanks</p>",
    useCustomRedirect: true,
    customSuccessUrl: "https://example.com/thanks",
    autoCloseEnabled: true,
    autoCloseDate: "2099-06-30",
    autoCloseTime: "18:00",
    autoCloseTimezone: "Europe/Berlin",
  };
  /** [a change to what a setting does, the setting]: refused while it is on. */
  const CHANGES: [Record<string, string>, string][] = [
    [{ respondentEmailFromName: "Other" }, "sendRespondentEmailNotifications"],
    [{ respondentEmailSubject: "Other" }, "sendRespondentEmailNotifications"],
    [{ respondentEmailMessageHTML: "<p>Other</p>" }, "sendRespondentEmailNotifications"],
    [{ customSuccessUrl: "https://elsewhere.example/" }, "useCustomRedirect"],
    [{ customSuccessUrl: "" }, "useCustomRedirect"],
    [{ autoCloseDate: "2099-07-31" }, "autoCloseEnabled"],
    [{ autoCloseDate: "2020-01-01" }, "autoCloseEnabled"],
    [{ autoCloseTime: "19:00" }, "autoCloseEnabled"],
    [{ autoCloseTimezone: "UTC" }, "autoCloseEnabled"],
  ];

  /** A form of a new organization with every paid setting on, and the organization then free. */
  async function downgraded() {
    const tenant = await createTenant("paid");
    const api = client(built.app, tenant.fullKey);
    const form = await api.createOk({ name: "Set up while paid", ...ON });
    await changePlan(built.db, tenant.org.id, "free");
    return { api, form };
  }

  test("keeps working as it is, but what it does cannot be changed (403, nothing applied)", async () => {
    const { api, form } = await downgraded();
    for (const [change, setting] of CHANGES) {
      const member = Object.keys(change)[0] as string;
      const refused = errorOf("forbidden", `${member}: needs the paid plan while ${setting} is on`);
      await assertUpdateRefused(api, form.id, change, refused, 403);
      // Nor alongside other changes, nor with the setting sent again as it is.
      const body = { name: "renamed", ...change, [setting]: true };
      await assertUpdateRefused(api, form.id, body, refused, 403);
    }
    assert.deepEqual(await api.getOk(form.id), form);
  });

  test("sending its current values again is no change: accepted, as a read-modify-write client does", async () => {
    const { api, form } = await downgraded();
    const updated = await api.updateOk(form.id, { ...ON, name: "renamed on free" });
    assert.deepEqual(updated, { ...form, name: "renamed on free", updatedAt: updated.updatedAt });
    assert.deepEqual(await api.getOk(form.id), updated);
  });

  test("turning it off is allowed, with its details in the same request; on again is refused", async () => {
    const { api, form } = await downgraded();
    const off = {
      autoCloseEnabled: false,
      autoCloseDate: "2099-07-31",
      useCustomRedirect: false,
      customSuccessUrl: "https://elsewhere.example/",
    };
    const updated = await api.updateOk(form.id, off);
    assert.deepEqual(updated, { ...form, ...off, updatedAt: updated.updatedAt });
    // Off, its details take no effect, and may change as on a form that never had it.
    const details = await api.updateOk(form.id, { autoCloseTime: "09:00", customSuccessUrl: "" });
    assert.deepEqual(details, {
      ...updated,
      autoCloseTime: "09:00",
      customSuccessUrl: "",
      updatedAt: details.updatedAt,
    });
    for (const setting of ["autoCloseEnabled", "useCustomRedirect"]) {
      await assertUpdateRefused(api, form.id, { [setting]: true }, needsPaid(setting), 403);
    }
    assert.deepEqual(await api.getOk(form.id), details);
  });

  test("a reopened form cannot be closed again by a new deadline", async () => {
    const tenant = await createTenant("paid");
    const api = client(built.app, tenant.fullKey);
    const soon = {
      autoCloseEnabled: true,
      autoCloseDate: "2020-01-01",
      autoCloseTime: "00:00",
      autoCloseTimezone: "UTC",
    };
    const form = await api.createOk({ name: "Closed by its deadline", ...soon });
    assert.equal(form.isClosed, true);
    await changePlan(built.db, tenant.org.id, "free");
    const reopened = await api.updateOk(form.id, { isClosed: false });
    assert.equal(reopened.isClosed, false);
    await assertUpdateRefused(
      api,
      form.id,
      { autoCloseDate: "2021-01-01" },
      errorOf("forbidden", "autoCloseDate: needs the paid plan while autoCloseEnabled is on"),
      403,
    );
    assert.equal((await api.getOk(form.id)).isClosed, false);
  });
});
