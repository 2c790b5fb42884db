import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import * as serverRules from "../../src/fields/answer-rules.ts";
import { ANSWER_RULES_PATH, compactModule, PAGE_ASSETS } from "../../src/hosted/page-assets.ts";
import { field, SAMPLE_FIELDS, showWhen } from "./sample-form.ts";

type Rules = typeof serverRules;
const fields = SAMPLE_FIELDS as unknown as serverRules.HostedField[];

/** The rules module as the page loads it, imported from its served text. */
async function servedRules(): Promise<Rules> {
  const body = (await PAGE_ASSETS[ANSWER_RULES_PATH]?.body()) ?? "";
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

/**
 * A process that imports the pages' modules and serves each once, then prints the bytes served
 * and whether its own thread loaded Node's type stripper (its internal module list names it).
 */
const SERVE_ASSETS = `
const { PAGE_ASSETS } = await import(${JSON.stringify(new URL("../../src/hosted/page-assets.ts", import.meta.url).href)});
let bytes = 0;
for (const asset of Object.values(PAGE_ASSETS)) bytes += (await asset.body()).length;
const stripper = process.moduleLoadList.some((name) => name.includes("amaro"));
process.stdout.write(JSON.stringify({ bytes, stripper }));
`;

test("with Node's compile cache filled, serving the pages' modules leaves the type stripper out of the server's thread", async () => {
  const cache = await mkdtemp(path.join(tmpdir(), "formdeck-compile-cache-"));
  try {
    const serve = async () => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--input-type=module", "-e", SERVE_ASSETS],
        { env: { ...process.env, NODE_COMPILE_CACHE: cache } },
      );
      return JSON.parse(stdout) as { bytes: number; stripper: boolean };
    };
    let bytes = 0;
    for (const asset of Object.values(PAGE_ASSETS)) bytes += (await asset.body()).length;
    // The first process strips our modules' types to fill the cache; the next finds them there.
    assert.deepEqual(await serve(), { bytes, stripper: true });
    assert.deepEqual(await serve(), { bytes, stripper: false });
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});
