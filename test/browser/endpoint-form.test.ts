import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { browserUnavailable, launchBrowser } from "./browser.ts";

after(closeTestDatabase);

/** The README's copy-paste form, as a newcomer would take it: the first HTML block of its section. */
function readmeForm(): string {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("## Accepting submissions"));
  const block = /```html\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, "README: an html block under 'Accepting submissions'");
  return block;
}

/** Serves `html` from a port of its own: the developer's site, another origin than formdeck. */
async function serveSite(html: string) {
  const site = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(
      `<!doctype html><html lang="en"><head><title>Acme</title></head><body>${html}</body></html>`,
    );
  });
  site.listen(0, "127.0.0.1");
  await new Promise((resolve) => site.once("listening", resolve));
  return { site, url: `http://127.0.0.1:${(site.address() as AddressInfo).port}/contact` };
}

test("the README's HTML form posts from another site in a real browser, and the submission reads back", {
  skip: browserUnavailable() ?? false,
}, async () => {
  const built = await buildTestApp();
  const browser = await launchBrowser();
  const { fullKey, readKey } = await createTenant();
  try {
    const base = await built.app.listen({ port: 0, host: "127.0.0.1" });
    const created = await built.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": fullKey },
      payload: { name: "Contact" },
    });
    const formId: string = created.json().id;
    const html = readmeForm().replace(
      /https?:\/\/localhost:3000\/f\/[^"'\s]+/g,
      `${base}/f/${formId}`,
    );
    assert.ok(html.includes(`${base}/f/${formId}`), "the README form posts to formdeck's intake");
    const { site, url } = await serveSite(html);
    try {
      const page = await browser.newPage();
      await page.goto(url);
      await page.locator("input[type=email]").fill("ada@example.test");
      for (const field of await page.locator("input[type=text]:visible, textarea:visible").all()) {
        await field.fill("Hello from a real browser");
      }
      await Promise.all([
        page.waitForURL(`${base}/f/${formId}/thanks`),
        page.locator("button[type=submit], input[type=submit]").first().click(),
      ]);
      assert.match((await page.locator("body").textContent()) ?? "", /thank/i);

      const list = await built.app.inject({
        method: "GET",
        url: `/api/v1/forms/${formId}/submissions`,
        headers: { "api-key": readKey },
      });
      assert.equal(list.statusCode, 200);
      const [submission, ...others] = list.json().data;
      assert.deepEqual(others, []);
      assert.equal(submission.isSpam, false);
      const values = submission.answers.map((answer: { value: unknown }) => answer.value);
      assert.ok(values.includes("ada@example.test"), JSON.stringify(submission.answers));
      // Across origins a browser sends only the page's origin (strict-origin-when-cross-origin).
      assert.equal(submission.meta.referrer, `${new URL(url).origin}/`);
      assert.match(submission.meta.userAgent, /Chrome/);

      const csv = await built.app.inject({
        method: "GET",
        url: `/api/v1/forms/${formId}/submissions/export?format=csv`,
        headers: { "api-key": readKey },
      });
      assert.equal(csv.statusCode, 200);
      assert.ok(
        csv.body.includes(submission.id) && csv.body.includes("ada@example.test"),
        csv.body,
      );
    } finally {
      site.close();
    }
  } finally {
    await browser.close();
    await built.close();
  }
});
