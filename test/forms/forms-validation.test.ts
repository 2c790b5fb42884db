import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import {
  assertCreateRefused,
  assertUpdateRefused,
  type Body,
  type Client,
  client,
  unprocessable,
} from "./form-fixtures.ts";

const READ_ONLY = [
  "id",
  "organizationId",
  "createdAt",
  "updatedAt",
  "submissions",
  "webhookEnabled",
  "webhookUrl",
];
const UPDATE_ONLY = ["seoTitle", "seoDescription", "seoImage", "allowedCountries"];
const DURATIONS = "must be one of 30, 60, 90, 365, forever, never";
const COLOR = "must be a color in the form #rgb or #rrggbb";
const HTTP_URL = "must be an absolute http or https URL";

/** [what is sent besides a valid name, the expected message]: refused on create and update. */
const REFUSED_MEMBERS: [Body, string][] = [
  [{ name: "" }, "name: must not be empty"],
  [{ name: "   \t " }, "name: must not be blank"],
  [{ name: "n".repeat(201) }, "name: must be at most 200 characters"],
  [{ name: 123 }, "name: must be a string"],
  [{ name: null }, "name: must be a string"],
  [{ isClosed: "true" }, "isClosed: must be a boolean"],
  [{ isClosed: null }, "isClosed: must be a boolean"],
  [{ removeServiceBranding: 1 }, "removeServiceBranding: must be a boolean"],
  [{ limitResponses: "false" }, "limitResponses: must be a boolean"],
  [{ submissionStorageDuration: "7" }, `submissionStorageDuration: ${DURATIONS}`],
  [{ submissionStorageDuration: "FOREVER" }, `submissionStorageDuration: ${DURATIONS}`],
  [{ submissionStorageDuration: 30 }, "submissionStorageDuration: must be a string"],
  [{ maxResponses: 0 }, "maxResponses: must be at least 1"],
  [
    { emailsToNotify: ["a@example.com", "b@example.com", "nope"] },
    "emailsToNotify[2]: must be an email address",
  ],
  [{ emailsToNotify: ["a b@example.com"] }, "emailsToNotify[0]: must be an email address"],
  [{ emailsToNotify: "a@example.com" }, "emailsToNotify: must be an array"],
  // Addresses, names and subjects end up in email headers: no line breaks, no control characters.
  ...["\u0001", "\u007f", "\u0085", "\u009f", "\r", "\n"].map((c): [Body, string] => [
    { emailsToNotify: ["a@example.com", `a${c}b@example.com`] },
    "emailsToNotify[1]: must be an email address",
  ]),
  ...(["name", "respondentEmailFromName", "respondentEmailSubject"] as const).flatMap((member) =>
    ["\r\nBcc: victim@example.com", "\n", "\r", "\t", "\u0001", "\u007f", "\u0085", "\u2028"].map(
      (c): [Body, string] => [
        { [member]: `Hello${c}` },
        `${member}: must not contain line breaks or control characters`,
      ],
    ),
  ),
  [{ emailsToNotify: [1] }, "emailsToNotify[0]: must be a string"],
  [{ autoCloseDate: "2026-02-30" }, "autoCloseDate: must be a date in the form YYYY-MM-DD"],
  [{ autoCloseDate: "2026-13-01" }, "autoCloseDate: must be a date in the form YYYY-MM-DD"],
  [{ autoCloseDate: "2026-3-1" }, "autoCloseDate: must be a date in the form YYYY-MM-DD"],
  [{ autoCloseTime: "24:00" }, "autoCloseTime: must be a time in the form HH:mm"],
  [{ autoCloseTime: "9:00" }, "autoCloseTime: must be a time in the form HH:mm"],
  [{ autoCloseTime: "12:60" }, "autoCloseTime: must be a time in the form HH:mm"],
  [{ autoCloseTimezone: "Mars/Base" }, "autoCloseTimezone: must be an IANA time zone"],
  [{ autoCloseTimezone: "+05:30" }, "autoCloseTimezone: must be an IANA time zone"],
  [{ tpButtonColor: "red" }, `tpButtonColor: ${COLOR}`],
  [{ tpTextColor: "#abcd" }, `tpTextColor: ${COLOR}`],
  [{ tpBackgroundColor: "" }, `tpBackgroundColor: ${COLOR}`],
  [{ tpButtonBackgroundColor: "#ggg" }, `tpButtonBackgroundColor: ${COLOR}`],
  [{ customSuccessUrl: "javascript:alert(1)" }, `customSuccessUrl: ${HTTP_URL}`],
  [{ customSuccessUrl: "ftp://example.com/x" }, `customSuccessUrl: ${HTTP_URL}`],
  [{ customSuccessUrl: "/thanks" }, `customSuccessUrl: ${HTTP_URL}`],
  [{ tpButtonUrl: "javascript:alert(1)" }, `tpButtonUrl: ${HTTP_URL}`],
  [{ tpButtonUrl: "ftp://example.com/x" }, `tpButtonUrl: ${HTTP_URL}`],
  [{ tpButtonUrl: "example.com" }, `tpButtonUrl: ${HTTP_URL}`],
  // URL parsing would drop the line break, the tab and the spaces, and read `\\` and `:/` as `//`.
  [
    { customSuccessUrl: "https://example.com/\r\nSet-Cookie: a=1" },
    `customSuccessUrl: ${HTTP_URL}`,
  ],
  [{ customSuccessUrl: " https://example.com" }, `customSuccessUrl: ${HTTP_URL}`],
  [{ customSuccessUrl: "https:\\\\evil.example" }, `customSuccessUrl: ${HTTP_URL}`],
  [{ tpButtonUrl: "http:/example.com" }, `tpButtonUrl: ${HTTP_URL}`],
  [{ tpButtonUrl: "https://exa\tmple.com" }, `tpButtonUrl: ${HTTP_URL}`],
  [{ nope: 1 }, "nope: is not allowed"],
  ...READ_ONLY.map((m): [Body, string] => [
    { [m]: m === "submissions" ? 0 : "x" },
    `${m}: is read-only`,
  ]),
];

/** [raw JSON text, expected message]: bodies that are not what a JSON object of members is. */
const REFUSED_TEXTS: [string, string][] = [
  ['{"name": "x",', "body: is not valid JSON"],
  ["", "body: is empty"],
  ["null", "body: must be an object"],
  ["[]", "body: must be an object"],
  ["123", "body: must be an object"],
  ['"x"', "body: must be an object"],
  ['{"name": "x", "__proto__": {"isClosed": true}}', "__proto__: is not allowed"],
  ['{"name": "x", "constructor": {"name": "y"}}', "constructor: is not allowed"],
  ['{"name": "a\\u0000b"}', "name: must not contain NUL characters"],
  ['{"name": "a\\ud800b"}', "name: must be valid Unicode text"],
  ['{"name": "x", "tpHeader": "\\udc00"}', "tpHeader: must be valid Unicode text"],
  [
    '{"name": "x", "emailsToNotify": ["a@example.com", "\\u0000"]}',
    "emailsToNotify[1]: must not contain NUL characters",
  ],
  ['{"name": "x", "a\\u0000b": 1}', "body: has a member name that is not valid text"],
];

let api: Client;
let close: () => Promise<void>;
let formId: string;

before(async () => {
  // Every case makes several requests: more than one key's default quota per window.
  const built = await buildTestApp({ rateLimitMax: 100_000 });
  close = built.close;
  api = client(built.app, (await createTenant("paid")).fullKey);
  formId = (await api.createOk({ name: "The form under update" })).id;
});

after(async () => {
  await close();
  await closeTestDatabase();
});

describe("create refuses, naming the member, and stores nothing", () => {
  test("name: is required", () => assertCreateRefused(api, {}, unprocessable("name: is required")));
  for (const [body, message] of REFUSED_MEMBERS) {
    test(`${JSON.stringify(body).slice(0, 80)} → ${message}`, () =>
      assertCreateRefused(api, { name: "x", ...body }, unprocessable(message)));
  }
  for (const [text, message] of REFUSED_TEXTS) {
    test(`body ${JSON.stringify(text)} → ${message}`, () =>
      assertCreateRefused(api, text, unprocessable(message)));
  }
  test("strict types on create: maxResponses must be an integer or null", async () => {
    for (const value of ["5", 1.5, true, [5]]) {
      const body = { name: "x", maxResponses: value };
      await assertCreateRefused(
        api,
        body,
        unprocessable("maxResponses: must be an integer or null"),
      );
    }
  });
  test("type: only endpoint or hosted", async () => {
    for (const type of ["form", "", "HOSTED", null]) {
      const message =
        type === null ? "type: must be a string" : "type: must be one of endpoint, hosted";
      await assertCreateRefused(api, { name: "x", type }, unprocessable(message));
    }
  });
  for (const member of UPDATE_ONLY) {
    test(`${member} is accepted only on update`, () =>
      assertCreateRefused(
        api,
        { name: "x", [member]: "" },
        unprocessable(`${member}: is not allowed`),
      ));
  }
});

describe("update refuses, naming the member, and changes nothing", () => {
  for (const [body, message] of REFUSED_MEMBERS) {
    test(`${JSON.stringify(body).slice(0, 80)} → ${message}`, () =>
      assertUpdateRefused(api, formId, body, unprocessable(message)));
  }
  for (const [text, message] of REFUSED_TEXTS) {
    test(`body ${JSON.stringify(text)} → ${message}`, () =>
      assertUpdateRefused(api, formId, text, unprocessable(message)));
  }
  test("strict types on update: maxResponses must be an integer, null refused", async () => {
    for (const value of [null, "5", 1.5]) {
      const message = "maxResponses: must be an integer";
      await assertUpdateRefused(api, formId, { maxResponses: value }, unprocessable(message));
    }
  });
  test("type and saveAnswers are not accepted on update", async () => {
    for (const body of [{ type: "hosted" }, { type: "endpoint" }, { saveAnswers: false }]) {
      const member = Object.keys(body)[0];
      await assertUpdateRefused(api, formId, body, unprocessable(`${member}: is not allowed`));
    }
  });
  test("seoImage: an absolute https URL only", async () => {
    for (const seoImage of [
      "http://example.com/a.png",
      "https://example.com/a b.png",
      "/a.png",
      "javascript:alert(1)",
      "ftp://x.y/a.png",
    ]) {
      const message = "seoImage: must be an absolute https URL";
      await assertUpdateRefused(api, formId, { seoImage }, unprocessable(message));
    }
  });
  test("a valid member does not get through alongside a refused one", () =>
    assertUpdateRefused(
      api,
      formId,
      { name: "changed", tpTextColor: "red" },
      unprocessable(`tpTextColor: ${COLOR}`),
    ));
});

describe("valid values are accepted and read back", () => {
  const ACCEPTED: Body[] = [
    { autoCloseTimezone: "UTC" },
    { autoCloseTimezone: "Asia/Kolkata" },
    { autoCloseTimezone: "America/Argentina/Buenos_Aires" },
    { autoCloseDate: "2028-02-29", autoCloseTime: "00:00" },
    { autoCloseDate: "0050-01-01" },
    { autoCloseTime: "23:59" },
    { tpButtonColor: "#abc", tpTextColor: "#AABBCC", tpBackgroundColor: "#aabbcc" },
    { customSuccessUrl: "http://example.com/ok", tpButtonUrl: "https://example.com/x?y=1" },
    { customSuccessUrl: "", tpButtonUrl: "" },
    { customSuccessUrl: "HTTPS://EXAMPLE.COM/X", tpButtonUrl: "https://bücher.example/ü?q=ä" },
    { submissionStorageDuration: "never", maxResponses: 2_147_483_647 },
    { submissionStorageDuration: "forever", name: "n".repeat(200) },
    { submissionStorageDuration: "30", emailsToNotify: [] },
    // One line of any text: letters, symbols, emoji and spaces of every kind are not controls.
    {
      name: "Café ☕ 😀\u00a0x\u3000y",
      respondentEmailFromName: "Zoë\u00a0Ünal",
      respondentEmailSubject: "Merci ✓ — reçu «\u200b» 🎉",
      emailsToNotify: ["zoë@example.com"],
    },
    // Texts that end up in no header keep their line breaks.
    { tpMessage: "line one\nline two", respondentEmailMessageHTML: "<p>a</p>\r\n<p>b</p>" },
  ];
  for (const body of ACCEPTED) {
    test(`on create and update: ${JSON.stringify(body).slice(0, 90)}`, async () => {
      const created = await api.createOk({ name: "accepted", ...body });
      assert.deepEqual(await api.getOk(created.id), created);
      for (const [member, value] of Object.entries(body)) assert.deepEqual(created[member], value);
      const updated = await api.updateOk(formId, body);
      for (const [member, value] of Object.entries(body)) assert.deepEqual(updated[member], value);
      assert.deepEqual(await api.getOk(formId), updated);
    });
  }
  test("seoTitle, seoDescription, seoImage and allowedCountries are accepted on update", async () => {
    const body = {
      seoTitle: "Share me",
      seoDescription: "A form about things",
      seoImage: "https://cdn.example.com/og.png",
      allowedCountries: "DE, FR",
    };
    const before = await api.getOk(formId);
    const updated = await api.updateOk(formId, body);
    assert.deepEqual(updated, { ...before, ...body, updatedAt: updated.updatedAt });
    assert.deepEqual(await api.getOk(formId), updated);
  });
});
