import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { describe, test } from "node:test";
import {
  answerErrors,
  fieldError,
  type HostedField,
  hiddenFieldIds,
  nextStep,
  splitSteps,
  stepPath,
} from "../../src/fields/answer-rules.ts";
import { field, options, rule } from "./field-builders.ts";

const submitted = (answers: Record<string, unknown>, files: string[] = []) => ({
  answers,
  fileFieldIds: new Set(files),
});
const hidden = (fields: HostedField[], answers: Record<string, unknown>, files: string[] = []) =>
  [...hiddenFieldIds(fields, submitted(answers, files))].sort();

describe("answer rules: the module the page serves", () => {
  test("has no runtime import and strips to plain JavaScript", async () => {
    const source = readFileSync("src/fields/answer-rules.ts", "utf8");
    assert.doesNotMatch(source, /^import (?!type )/m);
    const script = stripTypeScriptTypes(source);
    const url = `data:text/javascript,${encodeURIComponent(script)}`;
    const module = await import(url);
    assert.equal(typeof module.answerErrors, "function");
  });
});

describe("answer rules: show and hide", () => {
  const choice = field("plan", "single_choice", { options: options("Free", "Paid") });
  test("show_field shows only while a rule holds; hide_field hides while it holds", () => {
    const fields = [
      choice,
      field("card", "short_answer", {
        logic: {
          rules: [rule("r1", "show_field", { field: "card" }, [["plan", "equals", "Paid"]])],
        },
      }),
      field("why", "long_answer", {
        logic: {
          rules: [rule("r2", "hide_field", { fields: ["why"] }, [["plan", "equals", "Paid"]])],
        },
      }),
    ];
    assert.deepEqual(hidden(fields, {}), ["card"]);
    assert.deepEqual(hidden(fields, { plan: "Paid" }), ["why"]);
    assert.deepEqual(hidden(fields, { plan: "paid" }), ["card"]);
  });

  test("a hidden field counts as empty in other rules", () => {
    const fields = [
      field("a", "short_answer"),
      field("b", "short_answer"),
      field("c", "short_answer"),
    ];
    fields[0]?.logic.rules.push(
      rule("hideB", "hide_field", { field: "b" }, [["a", "equals", "x"]]),
      rule("showC", "show_field", { field: "c" }, [["b", "is_not_empty", ""]]),
    );
    assert.deepEqual(hidden(fields, { b: "typed" }), []);
    assert.deepEqual(hidden(fields, { a: "x", b: "typed" }), ["b", "c"]);
  });

  test("multiple_choice: equals and contains apply to each chosen value", () => {
    const many = field("tags", "multiple_choice", { options: options("red", "green", "blue") });
    const target = (operator: string, value: string) => [
      many,
      field("t", "short_answer", {
        logic: { rules: [rule("r", "show_field", { field: "t" }, [["tags", operator, value]])] },
      }),
    ];
    assert.deepEqual(hidden(target("equals", "green"), { tags: ["red", "green"] }), []);
    assert.deepEqual(hidden(target("equals", "gree"), { tags: ["red", "green"] }), ["t"]);
    assert.deepEqual(hidden(target("contains", "lu"), { tags: ["red", "blue"] }), []);
    assert.deepEqual(hidden(target("not_contains", "lu"), { tags: ["red", "blue"] }), ["t"]);
    assert.deepEqual(hidden(target("not_equals", "red"), { tags: ["green"] }), []);
    assert.deepEqual(hidden(target("is_empty", ""), { tags: [] }), []);
    assert.deepEqual(hidden(target("is_empty", ""), { tags: "red" }), ["t"]);
  });

  test("greater_than and less_than compare numbers, false when either side is not one", () => {
    const target = (operator: string, value: string) => [
      field("n", "number"),
      field("t", "short_answer", {
        logic: { rules: [rule("r", "show_field", { field: "t" }, [["n", operator, value]])] },
      }),
    ];
    assert.deepEqual(hidden(target("greater_than", "10"), { n: "10.5" }), []);
    assert.deepEqual(hidden(target("greater_than", "10"), { n: "9" }), ["t"]);
    assert.deepEqual(hidden(target("less_than", "10"), { n: "-3" }), []);
    assert.deepEqual(hidden(target("less_than", "10"), { n: "abc" }), ["t"]);
    assert.deepEqual(hidden(target("less_than", "ten"), { n: "3" }), ["t"]);
    assert.deepEqual(hidden(target("greater_than", "1"), { n: 2 }), []);
    assert.deepEqual(hidden(target("less_than", "10"), {}), ["t"]);
  });

  test("combinator any holds with one condition, all needs every one; files count as answers", () => {
    const build = (combinator: string) => [
      field("a", "short_answer"),
      field("cv", "file_upload"),
      field("t", "short_answer", {
        logic: {
          rules: [
            rule(
              "r",
              "show_field",
              { fields: ["t"] },
              [
                ["a", "equals", "yes"],
                ["cv", "is_not_empty", ""],
              ],
              combinator,
            ),
          ],
        },
      }),
    ];
    assert.deepEqual(hidden(build("any"), { a: "yes" }), []);
    assert.deepEqual(hidden(build("all"), { a: "yes" }), ["t"]);
    assert.deepEqual(hidden(build("all"), { a: "yes" }, ["cv"]), []);
  });

  test("a cycle of rules is decided, not looped", () => {
    const fields = [field("a", "short_answer"), field("b", "short_answer")];
    fields[0]?.logic.rules.push(
      rule("ra", "hide_field", { field: "a" }, [["b", "is_not_empty", ""]]),
      rule("rb", "hide_field", { field: "b" }, [["a", "is_not_empty", ""]]),
    );
    // Decided in field order: a, met again while b is decided, counts as visible, so b hides.
    assert.deepEqual(hidden(fields, { a: "1", b: "2" }), ["b"]);
  });
});

describe("answer rules: steps and jumps", () => {
  const build = () => [
    field("intro", "heading"),
    field("kind", "single_choice", {
      options: options("person", "company"),
      logic: {
        rules: [rule("j", "jump_to_page", { page: "p3" }, [["kind", "equals", "company"]])],
      },
    }),
    field("p2", "page"),
    field("first", "short_answer", { required: true }),
    field("p3", "page"),
    field("vat", "short_answer"),
    field("p4", "page"),
  ];

  test("page fields split the steps; a page field opens its step", () => {
    assert.deepEqual(
      splitSteps(build()).map((step) => step.map((f) => f.id)),
      [["intro", "kind"], ["p2", "first"], ["p3", "vat"], ["p4"]],
    );
  });

  test("Next follows a holding jump, else the next step; steps with nothing shown are passed", () => {
    const fields = build();
    assert.equal(nextStep(fields, submitted({}), 0), 1);
    assert.equal(nextStep(fields, submitted({ kind: "company" }), 0), 2);
    assert.equal(nextStep(fields, submitted({}), 1), 2);
    assert.equal(nextStep(fields, submitted({}), 2), null);
    assert.deepEqual(stepPath(fields, submitted({ kind: "company" })), [0, 2]);
    assert.deepEqual(stepPath(fields, submitted({})), [0, 1, 2]);
  });

  test("fields on a skipped step are hidden: required waived, answers dropped", () => {
    const fields = build();
    assert.deepEqual(hidden(fields, { kind: "company", first: "x" }), ["first", "p2", "p4"]);
    assert.deepEqual(answerErrors(fields, submitted({ kind: "company" })), []);
    assert.deepEqual(answerErrors(fields, submitted({ kind: "person" })), [
      { fieldId: "first", message: "is required" },
    ]);
  });

  test("a hidden field's jump does not apply", () => {
    const fields = build();
    fields[0]?.logic.rules.push(
      rule("h", "hide_field", { field: "kind" }, [["vat", "is_empty", ""]]),
    );
    assert.deepEqual(stepPath(fields, submitted({ kind: "company" })), [0, 1, 2]);
  });
});

describe("answer rules: values", () => {
  const cases: [HostedField, unknown, string | null][] = [
    [field("e", "email"), "ann@example.com", null],
    [field("e", "email"), "ann@example", "must be an email address"],
    [field("e", "email"), "a@b@example.com", "must be an email address"],
    [field("e", "email"), "ann @example.com", "must be an email address"],
    [field("n", "number"), "-12.5", null],
    [field("n", "number"), 7.25, null],
    [field("n", "number"), "1e3", "must be a number"],
    [field("n", "number"), "12.", "must be a number"],
    [field("w", "website"), "https://example.com/a?b", null],
    [field("w", "website"), "ftp://example.com", "must be an absolute http(s) URL"],
    [field("w", "website"), "example.com", "must be an absolute http(s) URL"],
    [field("d", "date"), "2024-02-29", null],
    [field("d", "date"), "2023-02-29", "must be a date (YYYY-MM-DD)"],
    [field("d", "date"), "2023-2-1", "must be a date (YYYY-MM-DD)"],
    [field("p", "phone"), "+49 (30) 123-45.67", null],
    [field("p", "phone"), "call me", "must be a phone number"],
    [field("s", "single_choice", { options: options("A", "B") }), "B", null],
    [field("s", "dropdown", { options: options("A", "B") }), "b", "must be one of the options"],
    [field("m", "multiple_choice", { options: options("A", "B") }), ["A", "B"], null],
    [field("m", "multiple_choice", { options: options("A", "B") }), "A", null],
    [
      field("m", "multiple_choice", { options: options("A") }),
      ["A", "C"],
      "must be options of this field",
    ],
    [
      field("m", "multiple_choice", { options: options("A") }),
      ["A", "A"],
      "must not repeat an option",
    ],
    [field("r", "rating", { ratingCount: 7 }), 7, null],
    [field("r", "rating", { ratingCount: 7 }), "1", null],
    [field("r", "rating", { ratingCount: 7 }), 8, "must be a whole number from 1 to 7"],
    [field("r", "rating"), "2.5", "must be a whole number from 1 to 5"],
    [field("c", "scale", { scaleMin: 0, scaleMax: 10 }), "0", null],
    [field("c", "scale", { scaleMin: 0, scaleMax: 10 }), 11, "must be a whole number from 0 to 10"],
    [field("t", "short_answer"), "x".repeat(1_000), null],
    [field("t", "short_answer"), "x".repeat(1_001), "must be at most 1000 characters"],
    [field("t", "long_answer"), "x".repeat(10_000), null],
    [field("t", "long_answer"), "x".repeat(10_001), "must be at most 10000 characters"],
    [field("t", "short_answer"), ["a", "b"], "must be a single value"],
    [field("t", "short_answer"), { a: 1 }, "must be text"],
    [field("f", "file_upload"), "not a file", "must be a file"],
  ];
  for (const [subject, value, expected] of cases) {
    test(`${subject.subtype} ${JSON.stringify(value).slice(0, 40)} → ${expected}`, () => {
      assert.equal(fieldError(subject, value, false), expected);
    });
  }

  test("blank: missing, empty, only spaces, no choice, no file; required or not stored", () => {
    for (const value of [undefined, null, "", "   ", []]) {
      assert.equal(
        fieldError(field("a", "short_answer", { required: true }), value, false),
        "is required",
      );
      assert.equal(fieldError(field("a", "short_answer"), value, false), null);
    }
    const upload = field("f", "file_upload", { required: true });
    assert.equal(fieldError(upload, undefined, false), "is required");
    assert.equal(fieldError(upload, undefined, true), null);
    assert.equal(fieldError(field("h", "heading", { required: true }), undefined, false), null);
  });

  test("every visible field's error, in field order", () => {
    const fields = [
      field("a", "email", { required: true }),
      field("b", "number"),
      field("c", "short_answer", { required: true }),
    ];
    assert.deepEqual(answerErrors(fields, submitted({ b: "x", a: "nope" })), [
      { fieldId: "a", message: "must be an email address" },
      { fieldId: "b", message: "must be a number" },
      { fieldId: "c", message: "is required" },
    ]);
  });
});
