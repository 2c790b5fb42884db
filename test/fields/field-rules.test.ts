import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  assertCreateRefused,
  assertUpdateRefused,
  type Client,
  client,
  MISSING_ID,
  unprocessable,
} from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { field, options, rule } from "./field-builders.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;
let api: Client;

before(async () => {
  built = await buildTestApp();
  api = client(built.app, (await createTenant("free")).fullKey);
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

const hosted = (fields: unknown[]) => ({ name: "fields", type: "hosted", fields });

test("fields as written get every member with defaults in every read; a read sent back is accepted", async () => {
  const written = [
    { id: "name", subtype: "short_answer", label: "Name" },
    { id: "pick", subtype: "single_choice", label: "Pick", options: options("A", "B") },
    { id: "stars", subtype: "rating", label: "Stars", ratingCount: 7, required: true },
    { id: "p2", subtype: "page", label: "Two" },
    {
      id: "how",
      subtype: "scale",
      label: "How",
      type: "radio",
      scaleMin: 0,
      scaleMax: 10,
      logic: {
        rules: [
          {
            id: "r",
            action: "hide_field",
            targetFieldId: "name",
            when: {
              combinator: "any",
              conditions: [{ id: "c", sourceFieldId: "pick", operator: "equals", value: "A" }],
            },
          },
        ],
      },
    },
  ];
  const created = await api.createOk(hosted(written));
  const expected = [
    field("name", "short_answer", { label: "Name" }),
    field("pick", "single_choice", { label: "Pick", options: options("A", "B") }),
    field("stars", "rating", { label: "Stars", ratingCount: 7, required: true }),
    field("p2", "page", { label: "Two" }),
    field("how", "scale", {
      label: "How",
      type: "radio",
      scaleMin: 0,
      scaleMax: 10,
      logic: {
        rules: [
          {
            id: "r",
            action: "hide_field",
            when: {
              combinator: "any",
              conditions: [{ id: "c", sourceFieldId: "pick", operator: "equals", value: "A" }],
            },
            targetFieldId: "name",
            targetFieldIds: [],
            targetPageId: "",
          },
        ],
      },
    }),
  ];
  assert.deepEqual(created.fields, expected);
  assert.deepEqual((await api.getOk(created.id)).fields, expected);
  const again = await api.updateOk(created.id, { fields: created.fields });
  assert.deepEqual(again.fields, expected);
});

test("each field rule is refused with fields[i].<member>: <reason>, nothing stored", async () => {
  const ok = field("ok", "short_answer");
  const cases: [unknown[], string][] = [
    [
      [{ id: "bad id", subtype: "email", label: "E" }],
      "fields[0].id: must be 1-64 characters of A-Z, a-z, 0-9, _ and -",
    ],
    [[ok, { id: "ok", subtype: "email", label: "E" }], "fields[1].id: must be unique in the form"],
    [
      [{ id: "x", subtype: "essay", label: "E" }],
      "fields[0].subtype: must be one of short_answer, long_answer, email, phone, number, website, date, single_choice, multiple_choice, dropdown, rating, scale, file_upload, heading, page",
    ],
    [[{ id: "x", subtype: "email", label: "  " }], "fields[0].label: must not be blank"],
    [
      [{ id: "x", subtype: "email", label: "E", type: "select" }],
      "fields[0].type: must be one of email for email",
    ],
    [
      [{ id: "x", subtype: "single_choice", label: "E", type: "checkbox", options: options("a") }],
      "fields[0].type: must be one of radio, select for single_choice",
    ],
    [[{ id: "x", subtype: "dropdown", label: "E" }], "fields[0].options: is required for dropdown"],
    [
      [
        {
          id: "x",
          subtype: "dropdown",
          label: "E",
          options: [
            { id: "a", value: "1" },
            { id: "b", value: " " },
          ],
        },
      ],
      "fields[0].options[1].value: must not be blank",
    ],
    [
      [
        {
          id: "x",
          subtype: "dropdown",
          label: "E",
          options: [
            { id: "a", value: "1" },
            { id: "a", value: "2" },
          ],
        },
      ],
      "fields[0].options[1].id: must be unique in the field",
    ],
    [
      [
        {
          id: "x",
          subtype: "dropdown",
          label: "E",
          options: [
            { id: "a", value: "1" },
            { id: "b", value: "1" },
          ],
        },
      ],
      "fields[0].options[1].value: must be unique in the field",
    ],
    [
      [{ id: "x", subtype: "email", label: "E", options: options("a") }],
      "fields[0].options: not used by email",
    ],
    [
      [{ id: "x", subtype: "email", label: "E", ratingCount: 7 }],
      "fields[0].ratingCount: not used by email",
    ],
    [
      [{ id: "x", subtype: "rating", label: "E", minLabel: "low" }],
      "fields[0].minLabel: not used by rating",
    ],
    [
      [{ id: "x", subtype: "rating", label: "E", ratingCount: 11 }],
      "fields[0].ratingCount: must be a whole number from 3 to 10",
    ],
    [
      [{ id: "x", subtype: "scale", label: "E", scaleMin: 2 }],
      "fields[0].scaleMin: must be 0 or 1",
    ],
    [
      [{ id: "x", subtype: "scale", label: "E", scaleMax: 11 }],
      "fields[0].scaleMax: must be a whole number from 2 to 10",
    ],
    [[{ id: "x", subtype: "email", label: "E", color: "red" }], "fields[0].color: is not allowed"],
    [
      [{ id: "x", subtype: "dropdown", label: "E", options: [{ id: "a", value: "1", extra: 1 }] }],
      "fields[0].options[0].extra: is not allowed",
    ],
  ];
  for (const [fields, message] of cases) {
    await assertCreateRefused(api, hosted(fields), unprocessable(message));
  }
});

test("logic rules: ids, actions, targets, jumps, conditions and sources", async () => {
  const src = field("src", "short_answer");
  const other = field("other", "email");
  const page = field("p2", "page");
  const head = field("head", "heading");
  const withRule = (r: unknown, at = src) => ({ ...at, logic: { rules: [r] } });
  const cond = [["src", "equals", "a"]] as [string, string, string][];
  const cases: [unknown[], string][] = [
    [
      [withRule(rule("r", "explode", { field: "other" }, cond)), other],
      "fields[0].logic.rules[0].action: must be one of show_field, hide_field, jump_to_page",
    ],
    [
      [withRule(rule("r", "show_field", {}, cond)), other],
      "fields[0].logic.rules[0].targetFieldIds: must name at least one field (or targetFieldId)",
    ],
    [
      [withRule(rule("r", "show_field", { fields: ["gone"] }, cond)), other],
      "fields[0].logic.rules[0].targetFieldIds[0]: is not a field of this form: gone",
    ],
    [
      [withRule(rule("r", "hide_field", { field: "src" }, cond)), other],
      "fields[0].logic.rules[0].targetFieldId: may not target the field that holds the rule",
    ],
    [
      [page, withRule(rule("r", "jump_to_page", { page: "p2" }, cond))],
      "fields[1].logic.rules[0].targetPageId: must be a page field after the field that holds the rule",
    ],
    [
      [withRule(rule("r", "jump_to_page", { page: "other" }, cond)), other],
      "fields[0].logic.rules[0].targetPageId: must be a page field after the field that holds the rule",
    ],
    [
      [withRule(rule("r", "show_field", { field: "other" }, cond, "most")), other],
      "fields[0].logic.rules[0].when.combinator: must be one of all, any",
    ],
    [
      [withRule(rule("r", "show_field", { field: "other" }, [])), other],
      "fields[0].logic.rules[0].when.conditions: must not be empty",
    ],
    [
      [withRule(rule("r", "show_field", { field: "other" }, [["src", "matches", "a"]])), other],
      "fields[0].logic.rules[0].when.conditions[0].operator: must be one of is_empty, is_not_empty, equals, not_equals, contains, not_contains, greater_than, less_than",
    ],
    [
      [
        withRule(rule("r", "show_field", { field: "other" }, [["head", "equals", "a"]])),
        other,
        head,
      ],
      "fields[0].logic.rules[0].when.conditions[0].sourceFieldId: must be a field of this form that takes answers",
    ],
    [
      [
        withRule(rule("r", "show_field", { field: "other" }, cond)),
        withRule(rule("r", "show_field", { field: "src" }, cond), other),
      ],
      "fields[1].logic.rules[0].id: must be unique in the form",
    ],
  ];
  for (const [fields, message] of cases) {
    await assertCreateRefused(api, hosted(fields), unprocessable(message));
  }
  const valid = [withRule(rule("r", "jump_to_page", { page: "p2" }, cond)), other, page];
  assert.equal((await api.create(hosted(valid))).status, 201);
});

test("an update that removes a field a rule names is refused; the form is left as it was", async () => {
  const fields = [
    {
      ...field("src", "short_answer"),
      logic: {
        rules: [rule("r", "show_field", { fields: ["other"] }, [["src", "is_not_empty", ""]])],
      },
    },
    field("other", "email"),
  ];
  const created = await api.createOk(hosted(fields));
  await assertUpdateRefused(
    api,
    created.id,
    { fields: [fields[0]] },
    unprocessable("fields[0].logic.rules[0].targetFieldIds[0]: is not a field of this form: other"),
  );
});

test("captchaProvider and captchaSiteKey: defaults, stored as sent, checked", async () => {
  const created = await api.createOk({ name: "captcha" });
  assert.equal(created.captchaProvider, "turnstile");
  assert.equal(created.captchaSiteKey, "");
  const updated = await api.updateOk(created.id, {
    captchaProvider: "hcaptcha",
    captchaSiteKey: "site-123",
  });
  assert.equal(updated.captchaProvider, "hcaptcha");
  assert.equal(updated.captchaSiteKey, "site-123");
  await assertUpdateRefused(
    api,
    created.id,
    { captchaProvider: "friendlycaptcha" },
    unprocessable("captchaProvider: must be one of turnstile, hcaptcha, recaptcha"),
  );
  await assertUpdateRefused(
    api,
    created.id,
    { captchaSiteKey: "k".repeat(201) },
    unprocessable("captchaSiteKey: must be at most 200 characters"),
  );
});

test("the fields' rules are the body's validation: 422 before the plan's 403 and the form's 404", async () => {
  const bad = [{ id: "x", subtype: "essay", label: "E" }];
  const message = unprocessable(
    "fields[0].subtype: must be one of short_answer, long_answer, email, phone, number, website, date, single_choice, multiple_choice, dropdown, rating, scale, file_upload, heading, page",
  );
  const paidOnly = { useCustomRedirect: true, customSuccessUrl: "https://example.com/done" };
  await assertCreateRefused(api, { ...hosted(bad), ...paidOnly }, message);
  const created = await api.createOk({ name: "plan order", type: "hosted" });
  await assertUpdateRefused(api, created.id, { fields: bad, ...paidOnly }, message);
  const missing = await api.update(MISSING_ID, { fields: bad });
  assert.deepEqual({ status: missing.status, body: missing.body }, { status: 422, body: message });
});
