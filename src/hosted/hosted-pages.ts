import type { FastifyReply } from "fastify";
import type { IntakeForm } from "../intake/intake.repository.ts";
import type { ErrorPage } from "../intake/intake-errors.ts";
import { successLocation } from "../intake/receive-submission.ts";
import type { CaptchaScriptUrls } from "./captcha-scripts.ts";
import type { PageState } from "./field-controls.ts";
import { formPage } from "./form-page.ts";
import { freshToken, PreparedPage } from "./html.ts";
import { closedPage, errorPage, notFoundPage, plainPage, thanksPage } from "./message-pages.ts";
import { PageCache } from "./page-cache.ts";
import { sendHostedPage } from "./page-policy.ts";
import { type Appearance, appearanceOf } from "./theme.ts";

/**
 * Every page a respondent sees, rendered once per form version and sent with a fresh nonce and,
 * for a form page, a fresh `_token`: one per page view.
 */
export class HostedPages {
  readonly #cache = new PageCache();
  readonly #scripts: CaptchaScriptUrls;
  readonly #notFound = new PreparedPage(notFoundPage());

  constructor(scripts: CaptchaScriptUrls) {
    this.#scripts = scripts;
  }

  #send(
    reply: FastifyReply,
    status: number,
    page: PreparedPage | string,
    appearance: Appearance | null,
  ) {
    const prepared = typeof page === "string" ? new PreparedPage(page) : page;
    return sendHostedPage(reply, status, prepared, {
      nonce: freshToken(),
      token: freshToken(),
      appearance,
      scripts: this.#scripts,
    });
  }

  /** GET /f/{formId}: the form, its closed page, or the 404 page for what is not a hosted form. */
  form(reply: FastifyReply, form: IntakeForm | null) {
    if (form?.type !== "hosted") return this.notFound(reply);
    const appearance = appearanceOf(form.settings);
    if (form.isClosed) {
      const page = this.#cache.get(`closed:${form.id}`, form.updatedAt, () =>
        closedPage(appearance),
      );
      return this.#send(reply, 200, page, appearance);
    }
    const page = this.#cache.get(`form:${form.id}`, form.updatedAt, () =>
      formPage(
        { id: form.id, name: form.name, appearance, next: successLocation(form) },
        this.#scripts,
      ),
    );
    return this.#send(reply, 200, page, appearance);
  }

  /** The form again after a refused post: the answers as typed and every field's message. */
  refused(reply: FastifyReply, form: IntakeForm, state: PageState) {
    const appearance = appearanceOf(form.settings);
    const page = formPage(
      { id: form.id, name: form.name, appearance, next: successLocation(form) },
      this.#scripts,
      state,
    );
    return this.#send(reply, 422, page, appearance);
  }

  thanks(reply: FastifyReply, form: IntakeForm) {
    const appearance = appearanceOf(form.settings);
    const page = this.#cache.get(`thanks:${form.id}`, form.updatedAt, () => thanksPage(appearance));
    return this.#send(reply, 200, page, appearance);
  }

  notFound(reply: FastifyReply) {
    return this.#send(reply, 404, this.#notFound, null);
  }

  /** An intake error as a page: in the form's look when the form is known. */
  error(reply: FastifyReply, status: number, page: ErrorPage, form: IntakeForm | null) {
    const { title, message, closed } = page;
    if (!form) return this.#send(reply, status, errorPage(title, message), null);
    const appearance = appearanceOf(form.settings);
    const html = closed
      ? closedPage(appearance, message)
      : plainPage(title, message, "problem", appearance);
    return this.#send(reply, status, html, appearance);
  }
}
