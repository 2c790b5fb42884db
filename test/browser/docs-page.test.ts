import assert from "node:assert/strict";
import { after, test } from "node:test";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { browserUnavailable, launchBrowser } from "./browser.ts";

after(closeTestDatabase);

test("the API reference at /docs renders every operation in a real browser", {
  skip: browserUnavailable() ?? false,
}, async () => {
  const built = await buildTestApp();
  const browser = await launchBrowser();
  try {
    const base = await built.app.listen({ port: 0, host: "127.0.0.1" });
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()}`));
    await page.goto(`${base}/docs`);
    await page.locator(".opblock").first().waitFor();
    const operations = await page.locator(".opblock-summary-path").allTextContents();
    assert.ok(operations.includes("/api/v1/forms"), operations.join(", "));
    assert.ok(operations.includes("/api/v1/forms/{formId}"), operations.join(", "));
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await built.close();
  }
});
