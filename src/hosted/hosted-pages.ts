import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import type { IntakeForm } from "../intake/intake.repository.ts";
import type { ErrorPage } from "../intake/intake-errors.ts";
import { successLocation } from "../intake/receive-submission.ts";
import type { CaptchaScriptUrls } from "./captcha-scripts.ts";
import type { PageState } from "./field-controls.ts";
import { formPage } from "./form-page.ts";
import type { PageForm } from "./form-view-cache.ts";
import { freshToken, NONCE_MARK, PreparedPage } from "./html.ts";
import { closedPage, errorPage, notFoundPage, plainPage, thanksPage } from "./message-pages.ts";
import { PageCache } from "./page-cache.ts";
import { pagePolicy, sendHostedPage, type ViewTokens, writeHostedPage } from "./page-policy.ts";
import { type Appearance, appearanceOf } from "./theme.ts";

/**
 * Every page a respondent sees, rendered once per form version and sent with a fresh nonce and,
 * for a form page, a fresh `_token`: one per page view.
 */
export class HostedPages {
  readonly #cache = new PageCache();
  readonly #scripts: CaptchaScriptUrls;
  readonly #notFound: PreparedPage;

  constructor(scripts: CaptchaScriptUrls) {
    this.#scripts = scripts;
    this.#notFound = this.#prepare(notFoundPage(), null);
  }

  /** The page and its policy, each with the nonce's stand-in: the work done once per version. */
  #prepare(html: string, appearance: Appearance | null) {
    return new PreparedPage(html, pagePolicy(NONCE_MARK, appearance, this.#scripts));
  }

  #send(reply: FastifyReply, status: number, page: PreparedPage) {
    return sendHostedPage(reply, status, page, this.#tokens());
  }

  #tokens(): ViewTokens {
    return { nonce: freshToken(), token: freshToken() };
  }

  /** GET /f/{formId}: the form, its closed page, or the 404 page for what is not a hosted form. */
  form(reply: FastifyReply, form: PageForm | null) {
    if (form?.type !== "hosted") return this.notFound(reply);
    return this.#send(reply, 200, this.#formPage(form));
  }

  /** The view of a hosted form, as `form` sends it, written to the HTTP server's response. */
  writeForm(response: ServerResponse, form: PageForm, requestId: string) {
    writeHostedPage(response, 200, this.#formPage(form), this.#tokens(), requestId);
  }

  /** A hosted form's page: the form, or its closed page. */
  #formPage(form: PageForm): PreparedPage {
    const version = String(form.updatedAt.getTime());
    if (form.isClosed) {
      return this.#cache.get(`closed:${form.id}`, version, () => {
        const appearance = appearanceOf(form.settings);
        return this.#prepare(closedPage(appearance), appearance);
      });
    }
    // The address a script goes to after sending depends on the plan (a custom redirect is paid).
    return this.#cache.get(`form:${form.id}`, `${version}:${form.plan}`, () => {
      const appearance = appearanceOf(form.settings);
      const next = successLocation(form);
      const html = formPage({ id: form.id, name: form.name, appearance, next }, this.#scripts);
      return this.#prepare(html, appearance);
    });
  }

  /** The form again after a refused post: the answers as typed and every field's message. */
  refused(reply: FastifyReply, form: IntakeForm, state: PageState) {
    const appearance = appearanceOf(form.settings);
    const page = formPage(
      { id: form.id, name: form.name, appearance, next: successLocation(form) },
      this.#scripts,
      state,
    );
    return this.#send(reply, 422, this.#prepare(page, appearance));
  }

  thanks(reply: FastifyReply, form: PageForm) {
    const version = String(form.updatedAt.getTime());
    const page = this.#cache.get(`thanks:${form.id}`, version, () => {
      const appearance = appearanceOf(form.settings);
      return this.#prepare(thanksPage(appearance), appearance);
    });
    return this.#send(reply, 200, page);
  }

  notFound(reply: FastifyReply) {
    return this.#send(reply, 404, this.#notFound);
  }

  /** An intake error as a page: in the form's look when the form is known. */
  error(reply: FastifyReply, status: number, page: ErrorPage, form: IntakeForm | null) {
    const { title, message, closed } = page;
    if (!form) return this.#send(reply, status, this.#prepare(errorPage(title, message), null));
    const appearance = appearanceOf(form.settings);
    const html = closed
      ? closedPage(appearance, message)
      : plainPage(title, message, "problem", appearance);
    return this.#send(reply, status, this.#prepare(html, appearance));
  }
}
