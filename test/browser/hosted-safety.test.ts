import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { field } from "../hosted/sample-form.ts";
import { browserUnavailable } from "./browser.ts";
import { hostedFixture } from "./hosted-fixture.ts";

const skip = browserUnavailable() ?? false;
let fixture: Awaited<ReturnType<typeof hostedFixture>>;

before(async () => {
  if (!skip) fixture = await hostedFixture();
});
after(async () => {
  await fixture?.close();
});

const SCRIPT = "<script>window.pwned=1</script>";
const ATTRIBUTE = '"><img src=x onerror="window.pwned=1">';
const URL_PAYLOAD = "javascript:window.pwned=1";
const hostile = (n: number) => `${SCRIPT}${ATTRIBUTE}${n}`;

/** Every text member an owner writes, each carrying both payloads. */
const TEXT_MEMBERS = [
  "headerTitle",
  "headerDescription",
  "submitButtonText",
  "closeMessageTitle",
  "closeMessageDescription",
  "tpHeader",
  "tpMessage",
  "tpButtonText",
  "customHoneypot",
];

/** Nothing the payloads could have made: no foreign script, image, handler or javascript: link. */
async function assertInert(page: Page, where: string) {
  // A string runs in the page: the project's types are Node's, not the DOM's.
  const found = await page.evaluate(`({
    pwned: window.pwned,
    scripts: [...document.scripts].filter(
      (s) => s.type !== "application/json" && !s.src.includes("/assets/"),
    ).length,
    images: [...document.images].filter((i) => i.getAttribute("src") === "x").length,
    handlers: [...document.querySelectorAll("*")].filter((e) =>
      [...e.attributes].some((a) => a.name.startsWith("on")),
    ).length,
    links: [...document.querySelectorAll("a")].filter(
      (a) => !/^https?:|^\\//.test(a.getAttribute("href") ?? ""),
    ).length,
  })`);

  assert.deepEqual(
    found,
    { pwned: undefined, scripts: 0, images: 0, handlers: 0, links: 0 },
    where,
  );
}

test("hostile text in every owner member and field part is shown as text, never run", {
  skip,
}, async () => {
  const settings = Object.fromEntries(TEXT_MEMBERS.map((member, i) => [member, hostile(i)]));
  const id = await fixture.createForm({
    ...settings,
    name: hostile(99),
    type: "hosted",
    useCustomThankYouPage: true,
    tpButtonUrl: "https://example.com/",
    showCustomClosedMessage: true,
    fields: [
      field({
        id: "a",
        subtype: "short_answer",
        label: hostile(20),
        showDescription: true,
        description: hostile(21),
      }),
      field({
        id: "b",
        subtype: "single_choice",
        label: hostile(22),
        options: [{ id: "o", value: hostile(23) }],
      }),
      field({
        id: "c",
        subtype: "dropdown",
        type: "select",
        label: hostile(24),
        options: [{ id: "o", value: hostile(25) }],
      }),
      field({
        id: "d",
        subtype: "scale",
        label: hostile(26),
        minLabel: hostile(27),
        maxLabel: hostile(28),
      }),
      field({ id: "e", subtype: "heading", label: hostile(29) }),
    ],
  });
  await fixture.updateForm(id, { seoTitle: hostile(30), seoDescription: hostile(31) });
  // URLs that the API would refuse, written straight into the store as an old row might hold them.
  await fixture.built.db.query(
    `UPDATE forms SET settings = settings || $2::text::jsonb WHERE id = $1`,
    [
      id,
      JSON.stringify({
        tpButtonUrl: URL_PAYLOAD,
        headerImage: URL_PAYLOAD,
        logo: `${URL_PAYLOAD}"`,
        seoImage: URL_PAYLOAD,
        backgroundColor: "red}</style><script>window.pwned=1</script>",
      }),
    ],
  );
  const page = await fixture.open(`/f/${id}`);
  await assertInert(page, "form page");
  assert.equal(await page.locator("h1").textContent(), hostile(0));
  assert.equal(await page.locator("label[for=a]").textContent(), hostile(20));
  assert.equal(await page.title(), hostile(30));
  await page.fill("#a", SCRIPT);
  await Promise.all([page.waitForURL(/\/thanks$/), page.click("button[type=submit]")]);
  await assertInert(page, "thank-you page");
  assert.equal(await page.locator("h1").textContent(), hostile(5));
  await fixture.updateForm(id, { isClosed: true });
  await page.goto(`${fixture.base}/f/${id}`);
  await assertInert(page, "closed page");
  assert.equal(await page.locator("h1").textContent(), hostile(3));
  await page.context().close();
});

test("the page loads nothing from another origin and breaks no rule of its policy", {
  skip,
}, async () => {
  const id = await fixture.createForm({
    name: "Quiet",
    type: "hosted",
    fields: [field({ id: "a", subtype: "short_answer", label: "A" })],
  });
  const page = await fixture.open(`/f/${id}`);
  const origins = new Set<string>();
  page.on("request", (request) => origins.add(new URL(request.url()).origin));
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.reload();
  await page.waitForLoadState("networkidle");
  assert.deepEqual([...origins], [fixture.base]);
  assert.deepEqual(violations, []);
  await page.context().close();
});
