import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import {
  assertNoSecret,
  type Body,
  type Client,
  DEFAULTS,
  expectedForm,
  freeAndPaidClients,
  listItemOf,
  TIMESTAMP,
} from "./form-fixtures.ts";

/** The members of the spec's create-body table, in its order. */
const CREATE_MEMBERS = [
  "name",
  "type",
  "removeServiceBranding",
  "sendEmailNotifications",
  "emailsToNotify",
  "submissionStorageDuration",
  "sendRespondentEmailNotifications",
  "respondentEmailFromName",
  "respondentEmailSubject",
  "respondentEmailMessageHTML",
  "limitResponses",
  "isClosed",
  "autoCloseEnabled",
  "autoCloseDate",
  "autoCloseTimezone",
  "autoCloseTime",
  "maxResponses",
  "useCustomThankYouPage",
  "tpButtonText",
  "tpButtonColor",
  "tpButtonBackgroundColor",
  "tpBackgroundColor",
  "tpTextColor",
  "tpHeader",
  "tpMessage",
  "tpButtonUrl",
  "useCustomRedirect",
  "customSuccessUrl",
  "customHoneypot",
  "providerCaptchaEnabled",
  "providerCaptchaSecretKey",
  "saveAnswers",
  "allowedDomains",
];

const SECRET = "captcha-secret-7f3a9c1e5b";

/** Every member of the create body, each with a valid value other than its default. */
const EVERY_MEMBER = {
  name: "Every member",
  type: "hosted",
  removeServiceBranding: true,
  sendEmailNotifications: false,
  emailsToNotify: ["owner@example.com", "team@example.org"],
  submissionStorageDuration: "90",
  sendRespondentEmailNotifications: true,
  respondentEmailFromName: "Formdeck Team",
  respondentEmailSubject: "Thanks for writing",
  respondentEmailMessageHTML: "<p>Thanks, <b>we got it</b>.</p>",
  limitResponses: true,
  isClosed: true,
  autoCloseEnabled: true,
  autoCloseDate: "2099-12-31",
  autoCloseTimezone: "Europe/Berlin",
  autoCloseTime: "23:59",
  maxResponses: 250,
  useCustomThankYouPage: true,
  tpButtonText: "Back home",
  tpButtonColor: "#123",
  tpButtonBackgroundColor: "#abcdef",
  tpBackgroundColor: "#FAFAFA",
  tpTextColor: "#0a0b0c",
  tpHeader: "Thank you!",
  tpMessage: "We will answer within a day. ✓ Ünïcödé too.",
  tpButtonUrl: "https://example.com/back?from=form#top",
  useCustomRedirect: true,
  customSuccessUrl: "http://example.com/done",
  customHoneypot: "_gotcha",
  providerCaptchaEnabled: true,
  providerCaptchaSecretKey: SECRET,
  saveAnswers: false,
  allowedDomains: "example.com, example.org",
};

let close: () => Promise<void>;
let db: Awaited<ReturnType<typeof buildTestApp>>["db"];
let free: Client;
let paid: Client;
let freeOrg: string;
let paidOrg: string;

before(async () => {
  const built = await buildTestApp();
  close = built.close;
  db = built.db;
  ({ free, paid, freeOrg, paidOrg } = await freeAndPaidClients(built.app));
});

after(async () => {
  await close();
  await closeTestDatabase();
});

const storedSecret = async (id: string) =>
  (await db.query<{ s: string }>("SELECT captcha_secret AS s FROM forms WHERE id = $1", [id]))[0]
    ?.s;

describe("create", () => {
  test("answers 201 with the whole record of defaults, and a Location header", async () => {
    const started = Date.now();
    const res = await free.create({ name: "Contact" });
    const finished = Date.now();
    assert.equal(res.status, 201, res.text);
    const { id, createdAt } = res.body;
    assert.deepEqual(res.body, {
      ...DEFAULTS,
      name: "Contact",
      id,
      organizationId: freeOrg,
      createdAt,
      updatedAt: createdAt,
    });
    assert.equal(res.headers.location, `/api/v1/forms/${id}`);
    assert.match(createdAt, TIMESTAMP);
    assert.equal(new Date(createdAt).toISOString(), createdAt);
    const at = Date.parse(createdAt);
    assert.ok(at >= started - 1 && at <= finished + 1, `${createdAt} is not the time of creation`);
    assert.deepEqual(await free.getOk(id), res.body);
    assert.deepEqual(await free.listed(id, "Contact"), listItemOf(res.body));
  });

  test("ids are opaque, URL-safe, distinct and not sequential", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await free.createOk({ name: `id ${i}` })).id);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) {
      assert.match(id, /^[A-Za-z0-9_-]{16,}$/);
      assert.doesNotMatch(id, /^\d+$/);
      assert.equal(encodeURIComponent(id), id);
    }
    for (let i = 1; i < ids.length; i++) {
      const [a, b] = [ids[i - 1] as string, ids[i] as string];
      let common = 0;
      while (a[common] === b[common]) common++;
      // A counter or a clock would differ only in its last few characters.
      assert.ok(a.length - common >= 16, `${a} and ${b} look sequential`);
    }
  });

  test("accepts every member of the create body and reads each back exactly", async () => {
    assert.deepEqual(Object.keys(EVERY_MEMBER), CREATE_MEMBERS);
    const res = await paid.create(EVERY_MEMBER);
    assert.equal(res.status, 201, res.text);
    const expected = expectedForm(res.body, EVERY_MEMBER, paidOrg);
    assert.deepEqual(res.body, expected);
    assert.equal(res.body.createdAt, res.body.updatedAt);
    for (const [member, value] of Object.entries(EVERY_MEMBER)) {
      if (member !== "providerCaptchaSecretKey")
        assert.notDeepEqual(value, (DEFAULTS as Body)[member], member);
    }
    const got = await paid.get(res.body.id);
    assert.deepEqual({ status: got.status, body: got.body }, { status: 200, body: expected });
  });

  test("the captcha secret is stored but never returned by create, get, update or list", async () => {
    const res = await free.create({ name: "Captcha secret", providerCaptchaSecretKey: SECRET });
    assert.equal(res.status, 201, res.text);
    assertNoSecret(res, SECRET);
    assert.deepEqual(res.body, expectedForm(res.body, { name: "Captcha secret" }, freeOrg));
    assert.equal(await storedSecret(res.body.id), SECRET);
    assertNoSecret(await free.get(res.body.id), SECRET);
    const updated = await free.update(res.body.id, { name: "Captcha secret 2" });
    assert.equal(updated.status, 200);
    assertNoSecret(updated, SECRET);
    const listed = await free.list("?search=Captcha%20secret");
    assert.equal(listed.body.meta.total, 1);
    assertNoSecret(listed, SECRET);
    assert.equal(await storedSecret(res.body.id), SECRET, "an update without it keeps it");
  });

  test("maxResponses: null is accepted on create", async () => {
    const body = { name: "No cap", limitResponses: true, maxResponses: null };
    const res = await free.create(body);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, expectedForm(res.body, body, freeOrg));
    assert.equal((await free.getOk(res.body.id)).maxResponses, null);
  });

  test("isClosed: true creates a closed form", async () => {
    const body = { name: "Closed from the start", isClosed: true };
    const form = await free.createOk(body);
    assert.deepEqual(form, expectedForm(form, body, freeOrg));
    assert.deepEqual(await free.getOk(form.id), form);
    assert.deepEqual(await free.listed(form.id, body.name), listItemOf(form));
  });

  test("type: hosted is stored and listed", async () => {
    const body = { name: "Hosted one", type: "hosted" };
    const form = await free.createOk(body);
    assert.deepEqual(form, expectedForm(form, body, freeOrg));
    assert.deepEqual(await free.getOk(form.id), form);
    const hosted = await free.list("?type=hosted&search=Hosted%20one");
    assert.deepEqual(hosted.body.data, [listItemOf(form)]);
    const endpoints = await free.list("?type=endpoint&search=Hosted%20one");
    assert.deepEqual(endpoints.body.data, []);
  });

  test("emailsToNotify loses duplicates, compared case-insensitively, first spelling kept", async () => {
    const body = {
      name: "Deduplicated",
      emailsToNotify: [
        "Ann@Example.com",
        "bob@example.com",
        "ann@example.com",
        "BOB@EXAMPLE.COM",
        "carl@example.com",
        "Ann@Example.com",
      ],
    };
    const form = await free.createOk(body);
    const emailsToNotify = ["Ann@Example.com", "bob@example.com", "carl@example.com"];
    assert.deepEqual(form, expectedForm(form, { ...body, emailsToNotify }, freeOrg));
    assert.deepEqual(await free.getOk(form.id), form);
    const updated = await free.updateOk(form.id, {
      emailsToNotify: ["X@example.com", "x@EXAMPLE.com", "y@example.com"],
    });
    assert.deepEqual(updated.emailsToNotify, ["X@example.com", "y@example.com"]);
  });
});
