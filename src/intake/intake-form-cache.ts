import type { IntakeForm } from "./intake.repository.ts";

/**
 * The forms this instance read for its intake, by id, so that a submission to a busy form costs
 * one round trip instead of two. Never trusted alone: a submission taken on a kept form is stored
 * by a statement that checks the form's version (one-statement-store.repository.ts), and any
 * refusal decided on a kept form is decided again on the form read anew. So a kept form may be
 * stale without anything being decided on stale rules. Bounded: past `capacity`, the form used
 * least recently goes.
 */
export class IntakeFormCache {
  readonly #forms = new Map<string, IntakeForm>();
  readonly #capacity: number;

  constructor(capacity = 1_000) {
    this.#capacity = capacity;
  }

  get(formId: string): IntakeForm | undefined {
    const form = this.#forms.get(formId);
    if (form) {
      // Re-inserted: Map keeps insertion order, so the first key is the least recently used.
      this.#forms.delete(formId);
      this.#forms.set(formId, form);
    }
    return form;
  }

  keep(form: IntakeForm): void {
    this.#forms.delete(form.id);
    this.#forms.set(form.id, form);
    if (this.#forms.size > this.#capacity) {
      const oldest = this.#forms.keys().next().value;
      if (oldest !== undefined) this.#forms.delete(oldest);
    }
  }

  forget(formId: string): void {
    this.#forms.delete(formId);
  }
}
