import assert from "node:assert/strict";
import { test } from "node:test";
import * as serverRules from "../../src/fields/answer-rules.ts";
import { ANSWER_RULES_PATH, compactModule, PAGE_ASSETS } from "../../src/hosted/page-assets.ts";
import { field, SAMPLE_FIELDS, showWhen } from "./sample-form.ts";

type Rules = typeof serverRules;
const fields = SAMPLE_FIELDS as unknown as serverRules.HostedField[];

/** The rules module as the page loads it, imported from its served text. */
async function servedRules(): Promise<Rules> {
  const body = PAGE_ASSETS[ANSWER_RULES_PATH]?.body ?? "";
  return import(`data:text/javascript,${encodeURIComponent(body)}`);
}

const SUBMISSIONS: serverRules.Submitted[] = [
  { answers: {}, fileFieldIds: new Set() },
  { answers: { role: "Other", role_other: "" }, fileFieldIds: new Set() },
  { answers: { role: "Designer", email: "a@b", team: "x", stars: "9" }, fileFieldIds: new Set() },
  {
    answers: { name: "Ada", email: "ada@example.com", role: "Other", topics: ["Forms", "Forms"] },
    fileFieldIds: new Set(),
  },
];

test("the page's rules are the intake's: the served module answers as the server's does", async () => {
  const page = await servedRules();
  for (const submitted of SUBMISSIONS) {
    assert.deepEqual(
      page.hiddenFieldIds(fields, submitted),
      serverRules.hiddenFieldIds(fields, submitted),
    );
    assert.deepEqual(
      page.answerErrors(fields, submitted),
      serverRules.answerErrors(fields, submitted),
    );
    for (let step = 0; step < serverRules.splitSteps(fields).length; step++) {
      assert.equal(
        page.nextStep(fields, submitted, step),
        serverRules.nextStep(fields, submitted, step),
      );
    }
  }
  assert.deepEqual(
    serverRules.answerErrors(fields, SUBMISSIONS[2] as serverRules.Submitted).map((e) => e.fieldId),
    ["name", "email", "team", "stars"],
    "the cases above reach the value checks",
  );
});

test("a jump on the page skips what the intake skips", async () => {
  const page = await servedRules();
  const jumping = [
    field({
      id: "who",
      subtype: "single_choice",
      label: "Who",
      options: [{ id: "a", value: "me" }],
    }),
    field({ id: "p2", subtype: "page", label: "Second" }),
    field({ id: "skipped", subtype: "short_answer", label: "Skipped", required: true }),
    field({ id: "p3", subtype: "page", label: "Third" }),
    field({ id: "shown", subtype: "short_answer", label: "Shown" }),
  ] as unknown as serverRules.HostedField[];
  (jumping[0] as serverRules.HostedField).logic.rules.push({
    ...showWhen("j1", "who", "me", ""),
    action: "jump_to_page",
    targetFieldIds: [],
    targetPageId: "p3",
  });
  const submitted = { answers: { who: "me" }, fileFieldIds: new Set<string>() };
  assert.equal(page.nextStep(jumping, submitted, 0), 2);
  assert.deepEqual(page.hiddenFieldIds(jumping, submitted), new Set(["p2", "skipped"]));
  assert.deepEqual(page.answerErrors(jumping, submitted), []);
});

test("compactModule drops comment and blank lines and indentation, never a line of code", () => {
  const source = [
    "/**",
    " * A block.",
    " */",
    "export function f(a) {",
    "  // a line comment",
    "",
    '  const url = "http://x//y"; // kept: code before it',
    '  return /^https?:\\/\\//.test(a) ? url : a + "  b";',
    "}",
    "/* one line */",
    "",
  ].join("\n");
  assert.equal(
    compactModule(source),
    [
      "export function f(a) {",
      'const url = "http://x//y"; // kept: code before it',
      'return /^https?:\\/\\//.test(a) ? url : a + "  b";',
      "}",
      "",
    ].join("\n"),
  );
});
