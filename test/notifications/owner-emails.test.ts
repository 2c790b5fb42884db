import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { deleteExpiredUnstoredEmails } from "../../src/notifications/email/email-retention.ts";
import { upload } from "../files/files-fixtures.ts";
import { closeTestDatabase } from "../helpers.ts";
import { post } from "../intake/intake-fixtures.ts";
import {
  EMAIL_ID,
  emailForm,
  emailHarness,
  emailsOf,
  type Harness,
  settledEmails,
  submit,
  TIMESTAMP,
} from "./email-fixtures.ts";

let harness: Harness;

before(async () => {
  harness = await emailHarness();
});

after(async () => {
  await harness.close();
  await closeTestDatabase();
});

test("owner notification: one message to every address, every answer in order, Reply-To the respondent", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test", "boss@acme.test"] });
  const subject = `New submission: ${form.name}`;
  const id = await submit(harness, form.id, {
    name: "Ada",
    email: "ada@example.com",
    message: "Hello <b>there</b>\nsecond line",
    topics: ["pricing", "support"],
  });
  const emails = await settledEmails(harness, form.key, form.id, id);
  assert.equal(emails.length, 1);
  const [email] = emails as [Record<string, unknown>];
  assert.match(String(email.id), EMAIL_ID);
  assert.match(String(email.createdAt), TIMESTAMP);
  assert.deepEqual(email, {
    id: email.id,
    kind: "owner",
    to: "team@acme.test, boss@acme.test",
    subject,
    status: "sent",
    attempts: 1,
    lastError: null,
    createdAt: email.createdAt,
  });

  const mails = harness.sink.withSubject(subject);
  assert.equal(mails.length, 1);
  const [mail] = mails as [(typeof mails)[number]];
  assert.deepEqual(mail.recipients, ["team@acme.test", "boss@acme.test"]);
  assert.equal(mail.user, "formdeck", "logged in with SMTP_URL's credentials");
  const to = Array.isArray(mail.parsed.to) ? mail.parsed.to : [mail.parsed.to];
  assert.deepEqual(
    to.flatMap((address) => address?.value.map((v) => v.address)),
    ["team@acme.test", "boss@acme.test"],
  );
  assert.deepEqual(mail.parsed.from?.value, [{ name: "Acme Forms", address: "forms@acme.test" }]);
  assert.deepEqual(mail.parsed.replyTo?.value, [{ name: "", address: "ada@example.com" }]);
  const record = (
    await harness.built.app.inject({
      url: `/api/v1/forms/${form.id}/submissions/${id}`,
      headers: { "api-key": form.key },
    })
  ).json();
  assert.equal(
    mail.parsed.text?.trim(),
    [
      `New submission to ${form.name}`,
      "",
      "name:",
      "Ada",
      "",
      "email:",
      "ada@example.com",
      "",
      "message:",
      "Hello <b>there</b>",
      "second line",
      "",
      "topics:",
      "pricing, support",
      "",
      `Submission ${id}, received ${record.createdAt}`,
    ].join("\n"),
  );
  const html = String(mail.parsed.html);
  const cells = [...html.matchAll(/<th[^>]*>(.*?)<\/th><td[^>]*>(.*?)<\/td>/gs)].map((m) => [
    m[1],
    m[2],
  ]);
  assert.deepEqual(cells, [
    ["name", "Ada"],
    ["email", "ada@example.com"],
    ["message", "Hello &lt;b&gt;there&lt;/b&gt;\nsecond line"],
    ["topics", "pricing, support"],
  ]);
});

test("Reply-To: _replyto first, then email; an answer that is not one valid address gives none", async () => {
  const cases: [Record<string, unknown>, string | null][] = [
    [{ _replyto: "reply@example.com", email: "ada@example.com" }, "reply@example.com"],
    [{ _replyto: "not an address", email: "ada@example.com" }, null],
    [{ email: "ada@example.com, bob@example.com" }, null],
    [{ email: ["ada@example.com", "bob@example.com"] }, null],
    [{ contact: "ada@example.com" }, null],
  ];
  for (const [answers, replyTo] of cases) {
    const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
    const id = await submit(harness, form.id, answers);
    await settledEmails(harness, form.key, form.id, id);
    const [mail] = harness.sink.withSubject(`New submission: ${form.name}`);
    assert.deepEqual(
      mail?.parsed.replyTo?.value.map((v) => v.address) ?? null,
      replyTo && [replyTo],
      JSON.stringify(answers),
    );
  }
});

test("censoring: card numbers and secret fields read as •••• and their last 4; stored answers are whole", async () => {
  const answers = {
    card: "4111 1111 1111 1111",
    note: "4242-4242-4242-4242",
    "Account password": "hunter2",
    api_token: "abcdefgh12345678",
    cards: ["4000056655665556", "not a card"],
    phone: "+49 30 1234567",
    order: "1234567890123",
  };
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  const id = await submit(harness, form.id, answers);
  await settledEmails(harness, form.key, form.id, id);
  const [mail] = harness.sink.withSubject(`New submission: ${form.name}`);
  const text = String(mail?.parsed.text);
  for (const line of [
    "card:\n••••1111\n",
    "note:\n••••4242\n",
    "Account password:\n••••\n",
    "api_token:\n••••5678\n",
    "cards:\n••••5556, ••••card\n",
    "phone:\n+49 30 1234567\n",
    "order:\n1234567890123\n",
  ]) {
    assert.ok(text.includes(line), `${JSON.stringify(line)} in ${text}`);
  }
  assert.ok(!String(mail?.parsed.html).includes("4111"));
  const stored = (
    await harness.built.app.inject({
      url: `/api/v1/forms/${form.id}/submissions/${id}`,
      headers: { "api-key": form.key },
    })
  ).json();
  assert.deepEqual(
    Object.fromEntries(stored.answers.map((a: { id: string; value: unknown }) => [a.id, a.value])),
    answers,
  );
});

test("disableEmailDataCensoring: values read whole", async () => {
  const form = await emailForm(harness, {
    emailsToNotify: ["team@acme.test"],
    disableEmailDataCensoring: true,
  });
  const id = await submit(harness, form.id, { card: "4111 1111 1111 1111", password: "hunter2" });
  await settledEmails(harness, form.key, form.id, id);
  const [mail] = harness.sink.withSubject(`New submission: ${form.name}`);
  assert.ok(
    String(mail?.parsed.text).includes("card:\n4111 1111 1111 1111\n\npassword:\nhunter2\n"),
  );
});

test("spam sends nothing and records nothing", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  const res = await post(harness.built.app, form.id, { body: "a=1&_gotcha=bot" });
  assert.equal(res.status, 201);
  const id = res.body.id as string;
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const emails = await emailsOf(harness, form.key, form.id, id);
  assert.deepEqual(emails.json(), { data: [] });
  assert.deepEqual(harness.sink.withSubject(`New submission: ${form.name}`), []);
});

test("no email without sendEmailNotifications or without addresses", async () => {
  for (const settings of [
    { emailsToNotify: ["team@acme.test"], sendEmailNotifications: false },
    { emailsToNotify: [] },
  ]) {
    const form = await emailForm(harness, settings);
    const id = await submit(harness, form.id, { a: "1" });
    assert.deepEqual((await emailsOf(harness, form.key, form.id, id)).json(), { data: [] });
  }
});

test("submissionStorageDuration never: the owner is still notified, nothing is stored", async () => {
  const form = await emailForm(harness, {
    emailsToNotify: ["team@acme.test"],
    submissionStorageDuration: "never",
  });
  const id = await submit(harness, form.id, { message: "kept nowhere" });
  const subject = `New submission: ${form.name}`;
  const deadline = Date.now() + 20_000;
  while (harness.sink.withSubject(subject).length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const [mail] = harness.sink.withSubject(subject);
  assert.ok(String(mail?.parsed.text).includes("message:\nkept nowhere\n"));
  const emails = await emailsOf(harness, form.key, form.id, id);
  assert.equal(emails.statusCode, 404);
  assert.deepEqual(emails.json(), {
    error: { code: "not_found", message: "submission: not found" },
  });
  // Its record has no submission to go with: the retention pass deletes it once final and an
  // hour old, and leaves the records of stored submissions alone.
  const stored = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  const storedId = await submit(harness, stored.id, { a: "1" });
  await settledEmails(harness, stored.key, stored.id, storedId);
  const records = (submissionId: string) =>
    harness.built.db.query<{ status: string }>(
      "SELECT status FROM email_records WHERE submission_id = $1",
      [submissionId],
    );
  const settledBy = Date.now() + 20_000;
  while ((await records(id))[0]?.status === "pending" && Date.now() < settledBy) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await deleteExpiredUnstoredEmails(harness.built.db, new Date(), () => false);
  assert.deepEqual(await records(id), [{ status: "sent" }], "kept within the hour");
  await deleteExpiredUnstoredEmails(
    harness.built.db,
    new Date(Date.now() + 3_700_000),
    () => false,
  );
  assert.deepEqual(await records(id), []);
  assert.deepEqual(await records(storedId), [{ status: "sent" }]);
});

test("emails route: read scope, another organization's submission is a 404, deleted with the submission", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  const other = await emailForm(harness);
  const id = await submit(harness, form.id, { a: "1" });
  await settledEmails(harness, form.key, form.id, id);
  const foreign = await emailsOf(harness, other.key, form.id, id);
  assert.equal(foreign.statusCode, 404);
  assert.deepEqual(foreign.json(), { error: { code: "not_found", message: "form: not found" } });
  const deleted = await harness.built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${form.id}/submissions/${id}`,
    headers: { "api-key": form.key },
  });
  assert.equal(deleted.statusCode, 204);
  assert.equal((await emailsOf(harness, form.key, form.id, id)).statusCode, 404);
  const rows = await harness.built.db.query(
    "SELECT id FROM email_records WHERE submission_id = $1",
    [id],
  );
  assert.deepEqual(rows, []);
});

test("files: the owner email names each file with its signed link, which works without a key", async () => {
  const form = await emailForm(harness, { emailsToNotify: ["team@acme.test"] });
  const res = await post(
    harness.built.app,
    form.id,
    upload([
      { name: "message", value: "see attached" },
      { name: "doc", file: { name: "notes.txt", content: Buffer.from("hello there\n") } },
    ]),
  );
  assert.equal(res.status, 201, res.text);
  const id = res.body.id as string;
  await settledEmails(harness, form.key, form.id, id);
  const [mail] = harness.sink.withSubject(`New submission: ${form.name}`);
  const text = String(mail?.parsed.text);
  const link = /\nFiles:\nnotes\.txt: (\S+)\n/.exec(text)?.[1];
  assert.ok(link, text);
  const record = (
    await harness.built.app.inject({
      url: `/api/v1/forms/${form.id}/submissions/${id}`,
      headers: { "api-key": form.key },
    })
  ).json();
  const [file] = record.files;
  assert.ok(link.startsWith(`http://localhost:3000/files/${file.id}?expires=`), link);
  assert.ok(String(mail?.parsed.html).includes(`>notes.txt</a>`));
  const fetched = await harness.built.app.inject({
    url: link.replace("http://localhost:3000", ""),
  });
  assert.equal(fetched.statusCode, 200);
  assert.equal(fetched.body, "hello there\n");
});
