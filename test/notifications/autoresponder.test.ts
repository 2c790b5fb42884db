import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { changePlan } from "../../src/admin/admin.service.ts";
import { closeTestDatabase } from "../helpers.ts";
import { emailForm, emailHarness, type Harness, settledEmails, submit } from "./email-fixtures.ts";

let harness: Harness;

before(async () => {
  harness = await emailHarness();
});

after(async () => {
  await harness.close();
  await closeTestDatabase();
});

const AUTORESPONDER = {
  sendRespondentEmailNotifications: true,
  respondentEmailFromName: "Acme Support",
  respondentEmailSubject: "Thanks for writing",
  respondentEmailMessageHTML:
    '<p style="color:red" onclick="x()">Hello {{name}},</p><script>alert(1)</script>' +
    "<p>You chose {{ topics }}; unknown: [{{missing}}].</p>" +
    '<a href="javascript:alert(1)">bad</a> <a href="https://acme.test/help" title="Help">help</a> ' +
    '<a href="mailto:help@acme.test">help@acme.test</a><img src="https://tracker.test/p.gif">',
};

test("autoresponder: from the form's name with MAIL_FROM's address, sanitized HTML, answers escaped, a text part", async () => {
  const form = await emailForm(harness, AUTORESPONDER, "paid");
  const id = await submit(harness, form.id, {
    name: "<b>Ada</b> & co",
    email: "Ada@Example.com",
    topics: ["pricing", "support"],
  });
  const emails = await settledEmails(harness, form.key, form.id, id);
  assert.deepEqual(
    emails.map(({ kind, to, subject, status, attempts, lastError }) => ({
      kind,
      to,
      subject,
      status,
      attempts,
      lastError,
    })),
    [
      {
        kind: "respondent",
        to: "Ada@Example.com",
        subject: "Thanks for writing",
        status: "sent",
        attempts: 1,
        lastError: null,
      },
    ],
  );
  const mails = harness.sink.withSubject("Thanks for writing");
  assert.deepEqual(
    mails.map((m) => m.recipients),
    [["Ada@example.com"]],
  );
  const [mail] = mails as [(typeof mails)[number]];
  assert.deepEqual(mail.parsed.from?.value, [{ name: "Acme Support", address: "forms@acme.test" }]);
  assert.equal(
    String(mail.parsed.html).trim(),
    "<p>Hello &lt;b&gt;Ada&lt;/b&gt; &amp; co,</p>" +
      "<p>You chose pricing, support; unknown: [].</p>" +
      '<a>bad</a> <a href="https://acme.test/help" title="Help">help</a> ' +
      '<a href="mailto:help@acme.test">help@acme.test</a>',
  );
  assert.equal(
    String(mail.parsed.text).trim(),
    [
      "Hello <b>Ada</b> & co,",
      "You chose pricing, support; unknown: [].",
      "bad help (https://acme.test/help) help@acme.test",
    ].join("\n"),
  );
});

test("autoresponder: none on the free plan, none without a respondent address, none when off", async () => {
  const paid = await emailForm(harness, AUTORESPONDER, "paid");
  await changePlan(harness.built.db, paid.organizationId, "free");
  const cases: [string, string, Record<string, unknown>][] = [
    [paid.id, paid.key, { email: "ada@example.com" }],
  ];
  const noAddress = await emailForm(harness, AUTORESPONDER, "paid");
  cases.push([noAddress.id, noAddress.key, { email: "not an address" }]);
  const off = await emailForm(
    harness,
    { ...AUTORESPONDER, sendRespondentEmailNotifications: false },
    "paid",
  );
  cases.push([off.id, off.key, { email: "ada@example.com" }]);
  for (const [formId, key, answers] of cases) {
    const id = await submit(harness, formId, answers);
    assert.deepEqual(await settledEmails(harness, key, formId, id), [], formId);
  }
});

test("autoresponder cap: 5 per address (any case) per form per hour, the 6th skipped as rate limited", async () => {
  const form = await emailForm(
    harness,
    { ...AUTORESPONDER, emailsToNotify: ["team@acme.test"] },
    "paid",
  );
  const other = await emailForm(harness, AUTORESPONDER, "paid");
  const spellings = ["cap@example.com", "CAP@example.com", "Cap@Example.com"];
  const statuses: unknown[] = [];
  for (let n = 0; n < 6; n++) {
    const id = await submit(harness, form.id, { email: spellings[n % 3] });
    const emails = await settledEmails(harness, form.key, form.id, id);
    statuses.push(emails.map((e) => [e.kind, e.status, e.attempts, e.lastError]));
  }
  const sent = [
    ["owner", "sent", 1, null],
    ["respondent", "sent", 1, null],
  ];
  assert.deepEqual(statuses, [
    sent,
    sent,
    sent,
    sent,
    sent,
    [
      ["owner", "sent", 1, null],
      ["respondent", "skipped", 0, "rate limited"],
    ],
  ]);
  // Another form, or another address, has a cap of its own.
  const elsewhere = await submit(harness, other.id, { email: "cap@example.com" });
  assert.equal((await settledEmails(harness, other.key, other.id, elsewhere))[0]?.status, "sent");
  const otherAddress = await submit(harness, form.id, { email: "someone@example.com" });
  const emails = await settledEmails(harness, form.key, form.id, otherAddress);
  assert.equal(emails[1]?.status, "sent");
});
