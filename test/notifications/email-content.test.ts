import assert from "node:assert/strict";
import { test } from "node:test";
import { censorAnswers, isCardNumber, masked } from "../../src/notifications/email/censor.ts";
import { respondentAddress } from "../../src/notifications/email/respondent-address.ts";

const answer = (id: string, value: unknown, label = id) => ({ id, label, value });

test("card numbers: 13 to 19 digits passing Luhn, spaces and dashes ignored", () => {
  for (const card of [
    "4222222222222",
    "4111 1111 1111 1111",
    "4242-4242-4242-4242",
    "6011000990139424",
    "3530111333300000",
    "4000056655665556",
    "6250941006528599",
  ]) {
    assert.ok(isCardNumber(card), card);
  }
  for (const other of [
    "4111 1111 1111 1112",
    "411111111111",
    "41111111111111111111",
    "4111 1111 1111 111a",
    "",
    "4111.1111.1111.1111",
  ]) {
    assert.ok(!isCardNumber(other), other);
  }
});

test("masked: •••• and the last 4 characters; •••• alone under 8", () => {
  assert.equal(masked("hunter22"), "••••er22");
  assert.equal(masked("hunter2"), "••••");
  assert.equal(masked(""), "••••");
});

test("censorAnswers: by name or label, case-insensitive; arrays element by element; JSON values as text", () => {
  const censored = censorAnswers([
    answer("q1", "abcdefgh1234", "Your PassWord"),
    answer("SSN", "123-45-6789"),
    answer("iban_number", "DE89370400440532013000"),
    answer("cvc", 123),
    answer("secret_list", ["long secret one", "short"]),
    answer("numbers", [4111111111111111, "plain"]),
    answer("nothing", null),
    answer("comment", "my card was declined"),
  ]);
  assert.deepEqual(
    censored.map((a) => a.value),
    [
      "••••1234",
      "••••6789",
      "••••3000",
      "••••",
      ["•••• one", "••••"],
      ["••••1111", "plain"],
      null,
      "my card was declined",
    ],
  );
});

test("respondentAddress: _replyto, then email, then a hosted form's first email field; one valid address only", () => {
  const fields = [
    { id: "f_name", type: "text", subtype: "short_answer" },
    { id: "f_mail", type: "email", subtype: "email" },
    { id: "f_mail2", type: "email", subtype: "email" },
  ];
  assert.equal(
    respondentAddress(
      [answer("f_mail", "ada@example.com"), answer("f_mail2", "b@example.com")],
      fields,
    ),
    "ada@example.com",
  );
  assert.equal(respondentAddress([answer("email", " ada@example.com ")], []), "ada@example.com");
  assert.equal(
    respondentAddress([answer("_replyto", "r@example.com"), answer("email", "e@example.com")], []),
    "r@example.com",
  );
  assert.equal(
    respondentAddress([answer("_replyto", ""), answer("email", "e@example.com")], []),
    null,
  );
  assert.equal(respondentAddress([answer("email", "a@example.com b@example.com")], []), null);
  assert.equal(respondentAddress([answer("f_mail", "ada@example.com")], []), null);
});
