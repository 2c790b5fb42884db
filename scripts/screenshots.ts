// npm run screenshots: renders the sample hosted form into docs/screenshots/*.png (README).
import { mkdirSync } from "node:fs";
import type { Page } from "playwright-core";
import { launchBrowser } from "../test/browser/browser.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../test/helpers.ts";
import { CUSTOM_THEME, SAMPLE_FORM } from "../test/hosted/sample-form.ts";

const out = new URL("../docs/screenshots/", import.meta.url);
mkdirSync(out, { recursive: true });

const built = await buildTestApp();
const browser = await launchBrowser();
try {
  const base = await built.app.listen({ port: 0, host: "127.0.0.1" });
  const { fullKey } = await createTenant();
  const create = async (body: Record<string, unknown>) => {
    const response = await built.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": fullKey },
      payload: body,
    });
    if (response.statusCode !== 201) throw new Error(response.body);
    return response.json().id as string;
  };
  const plain = await create(SAMPLE_FORM);
  const themed = await create({ ...SAMPLE_FORM, ...CUSTOM_THEME });
  const closed = await create({
    ...SAMPLE_FORM,
    isClosed: true,
    showCustomClosedMessage: true,
    closeMessageTitle: "Enquiries are paused",
    closeMessageDescription:
      "We are fully booked until March. Leave us a note at hello@example.com.",
  });

  /** The custom theme on its last step: the rating and the scale, answered. */
  const lastStep = async (page: Page) => {
    await page.fill("#name", "Ada Lovelace");
    await page.fill("#email", "ada@example.com");
    await page.check("input[name=role][value=Developer]");
    await page.click("[data-next]");
    await page.click("[data-next]");
    await page.check("input[name=stars][value='4']");
    await page.check("input[name=likely][value='9']");
    await page.fill("#message", "Looking forward to it.");
    await page.locator("#message").blur();
  };
  const shots: [string, string, number, ((page: Page) => Promise<void>)?][] = [
    ["form-default", `/f/${plain}`, 1280],
    ["form-custom-theme", `/f/${themed}`, 1280, lastStep],
    ["form-phone", `/f/${plain}`, 375],
    ["thank-you", `/f/${themed}/thanks`, 1280],
    ["closed", `/f/${closed}`, 1280],
  ];
  for (const [name, path, width, prepare] of shots) {
    const phone = width < 500;
    const page = await browser.newPage({
      viewport: { width, height: phone ? 812 : 900 },
      deviceScaleFactor: phone ? 2 : 1,
    });
    await page.goto(`${base}${path}`);
    await prepare?.(page);
    await page.screenshot({
      path: new URL(`${name}.png`, out).pathname,
      fullPage: !phone,
    });
    await page.close();
    process.stdout.write(`docs/screenshots/${name}.png\n`);
  }
} finally {
  await browser.close();
  await built.close();
  await closeTestDatabase();
}
