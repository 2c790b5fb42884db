import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";
import { CUSTOM_THEME, field, SAMPLE_FORM } from "../hosted/sample-form.ts";
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

/** axe-core's default rules: no serious or critical violation. */
async function assertAccessible(page: Page, where: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const grave = results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );
  assert.deepEqual(grave, [], where);
}

for (const [theme, settings] of [
  ["default theme", {}],
  ["custom theme", CUSTOM_THEME],
] as const) {
  test(`axe finds no serious violation: form, form with errors, thank-you, closed, 404 (${theme})`, {
    skip,
    timeout: 60_000,
  }, async () => {
    const id = await fixture.createForm({ ...SAMPLE_FORM, ...settings });
    // axe's own script is injected into the page: the page's policy would refuse it.
    const page = await fixture.open(`/f/${id}`, { bypassCSP: true });
    await assertAccessible(page, "form");
    await page.click("[data-next]");
    assert.equal(await page.locator("#name").getAttribute("aria-invalid"), "true");
    await assertAccessible(page, "form with errors");
    await page.goto(`${fixture.base}/f/${id}/thanks`);
    await assertAccessible(page, "thank-you page");
    // axe needs JavaScript: the page as without it is the page whose script does not load.
    const noScript = await fixture.open(`/f/${id}`, { bypassCSP: true }, true);
    assert.equal(await noScript.locator("#message").isVisible(), true);
    await assertAccessible(noScript, "form without JavaScript (all steps)");
    await noScript.context().close();
    await fixture.updateForm(id, { isClosed: true });
    await page.goto(`${fixture.base}/f/${id}`);
    await assertAccessible(page, "closed page");
    await page.goto(`${fixture.base}/f/form_AAAAAAAAAAAAAAAAAAAAAA`);
    await assertAccessible(page, "404 page");
    await page.context().close();
  });
}

test("a form filled and sent with the keyboard alone", { skip, timeout: 60_000 }, async () => {
  const id = await fixture.createForm({
    name: "Keyboard",
    type: "hosted",
    fields: [
      field({ id: "name", subtype: "short_answer", label: "Name", required: true }),
      field({
        id: "size",
        subtype: "single_choice",
        label: "Size",
        required: true,
        options: [
          { id: "s", value: "Small" },
          { id: "l", value: "Large" },
        ],
      }),
      field({
        id: "extras",
        subtype: "multiple_choice",
        label: "Extras",
        options: [
          { id: "a", value: "Ice" },
          { id: "b", value: "Lemon" },
        ],
      }),
      field({
        id: "when",
        subtype: "dropdown",
        type: "select",
        label: "When",
        options: [
          { id: "n", value: "Now" },
          { id: "t", value: "Later" },
        ],
      }),
    ],
  });
  const page = await fixture.open(`/f/${id}`);
  const focused = () =>
    page.evaluate(
      'document.activeElement?.getAttribute("name") ?? document.activeElement?.tagName',
    );
  await page.keyboard.press("Tab");
  assert.equal(
    await focused(),
    "name",
    "the first control is the first stop (the trap is skipped)",
  );
  await page.keyboard.type("Keys Only");
  await page.keyboard.press("Tab");
  assert.equal(await focused(), "size");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Tab");
  assert.equal(await focused(), "extras");
  await page.keyboard.press("Space");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  assert.equal(await focused(), "when");
  await page.keyboard.press("ArrowDown");
  // Strings run in the page: the project's types are Node's, not the DOM's.
  const outline = await page.evaluate(
    '(s => s.outlineStyle !== "none" || s.boxShadow !== "none")(getComputedStyle(document.activeElement))',
  );
  assert.ok(outline, "a visible focus indicator");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate("document.activeElement.textContent"), "Submit");
  await Promise.all([page.waitForURL(/\/thanks$/), page.keyboard.press("Enter")]);
  const [stored] = await fixture.submissions(id);
  assert.deepEqual(Object.fromEntries((stored?.answers ?? []).map((a) => [a.id, a.value])), {
    name: "Keys Only",
    size: "Large",
    extras: "Ice",
    when: "Now",
  });
  await page.context().close();
});
