import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import sharp from "sharp";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { browserUnavailable, launchBrowser } from "./browser.ts";

after(closeTestDatabase);

/** The README's upload form: the first HTML block of its Files section. */
function readmeUploadForm(): string {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("### Files"));
  const block = /```html\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.includes('enctype="multipart/form-data"'), "README: an upload form under Files");
  return block as string;
}

test("the README's upload form sends a file from a real browser; the API gives it back", {
  skip: browserUnavailable() ?? false,
}, async () => {
  const built = await buildTestApp();
  const browser = await launchBrowser();
  const { fullKey, readKey } = await createTenant();
  const photo = await sharp({
    create: { width: 64, height: 48, channels: 3, background: "#c0ffee" },
  })
    .png()
    .toBuffer();
  try {
    const base = await built.app.listen({ port: 0, host: "127.0.0.1" });
    const created = await built.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": fullKey },
      payload: { name: "Jobs" },
    });
    const formId: string = created.json().id;
    const html = readmeUploadForm().replace(
      /https?:\/\/localhost:3000\/f\/[^"'\s]+/g,
      `${base}/f/${formId}`,
    );
    const site = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(
        `<!doctype html><html lang="en"><head><title>Jobs</title></head><body>${html}</body></html>`,
      );
    });
    site.listen(0, "127.0.0.1");
    await new Promise((resolve) => site.once("listening", resolve));
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/apply`);
      await page.locator("input[type=email]").fill("ada@example.test");
      await page.locator("input[type=file]").setInputFiles({
        name: "portrait.png",
        mimeType: "image/png",
        buffer: photo,
      });
      await Promise.all([
        page.waitForURL(`${base}/f/${formId}/thanks`),
        page.locator("button[type=submit]").click(),
      ]);

      const list = await built.app.inject({
        url: `/api/v1/forms/${formId}/submissions`,
        headers: { "api-key": readKey },
      });
      const [submission] = list.json().data;
      assert.deepEqual(submission.answers, [
        { id: "email", label: "email", value: "ada@example.test" },
      ]);
      const [file] = submission.files;
      assert.deepEqual(
        { field: file.field, name: file.name, type: file.type, size: file.size },
        { field: "cv", name: "portrait.png", type: "image/png", size: photo.length },
      );
      const download = await built.app.inject({
        url: `/api/v1/forms/${formId}/submissions/${submission.id}/files/${file.id}`,
        headers: { "api-key": readKey },
      });
      assert.equal(download.statusCode, 200);
      assert.ok(download.rawPayload.equals(photo), "the same bytes come back");
      assert.equal(
        download.headers["content-disposition"],
        "attachment; filename=\"portrait.png\"; filename*=UTF-8''portrait.png",
      );
    } finally {
      site.close();
    }
  } finally {
    await browser.close();
    await built.close();
  }
});
