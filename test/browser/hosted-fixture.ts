import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { launchBrowser } from "./browser.ts";

export type Body = Record<string, unknown>;

/**
 * One app listening on loopback and one Chromium for a file of hosted page tests, with helpers
 * to create forms (on a free or a paid organization) and read what the intake stored.
 */
export async function hostedFixture() {
  const built = await buildTestApp();
  const browser: Browser = await launchBrowser();
  const base = await built.app.listen({ port: 0, host: "127.0.0.1" });
  const tenants = { free: await createTenant("free"), paid: await createTenant("paid") };

  async function createForm(body: Body, plan: "free" | "paid" = "free"): Promise<string> {
    const response = await built.app.inject({
      method: "POST",
      url: "/api/v1/forms",
      headers: { "api-key": tenants[plan].fullKey },
      payload: body,
    });
    if (response.statusCode !== 201) throw new Error(`create: ${response.body}`);
    return response.json().id;
  }

  async function updateForm(id: string, body: Body, plan: "free" | "paid" = "free") {
    const response = await built.app.inject({
      method: "PATCH",
      url: `/api/v1/forms/${id}`,
      headers: { "api-key": tenants[plan].fullKey },
      payload: body,
    });
    if (response.statusCode !== 200) throw new Error(`update: ${response.body}`);
  }

  /** The answers stored for a form, newest first, as the API reads them. */
  async function submissions(id: string, plan: "free" | "paid" = "free") {
    const response = await built.app.inject({
      url: `/api/v1/forms/${id}/submissions`,
      headers: { "api-key": tenants[plan].readKey },
    });
    return response.json().data as {
      answers: { id: string; value: unknown }[];
      files: { field: string; name: string; size: number }[];
      isSpam: boolean;
    }[];
  }

  /** A page in a context of its own; `withoutScript`: our script refused, as when JS is off. */
  async function open(
    path: string,
    options: BrowserContextOptions = {},
    withoutScript = false,
  ): Promise<Page> {
    const context = await browser.newContext(options);
    if (withoutScript) await context.route("**/assets/form.js", (route) => route.abort());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    (page as Page & { errors: string[] }).errors = errors;
    await page.goto(`${base}${path}`);
    return page;
  }

  return {
    base,
    built,
    browser,
    createForm,
    updateForm,
    submissions,
    open,
    async close() {
      await browser.close();
      await built.close();
      await closeTestDatabase();
    },
  };
}

/** Errors the page reported (script errors, refused resources): a test expects none. */
export const pageErrors = (page: Page) => (page as Page & { errors: string[] }).errors;
