import { setTimeout as sleep } from "node:timers/promises";
import {
  confirmKeyChange,
  hearKeyChangesOfThisProcess,
  KEY_CHANGES_CHANNEL,
} from "../auth/key-cache.ts";
import type { Database } from "../db/database.ts";
import { confirmChange, haveEnded, openTransactions } from "../forms/form-changes.repository.ts";
import {
  confirmationOf,
  FORM_CHANGES_CHANNEL,
  type FormChangeListener,
  formChange,
  hearFormChangesOfThisProcess,
  readPayload,
} from "../forms/form-changes.ts";
import { settingsWithDefaults } from "../forms/form-defaults.ts";
import type { IntakeForm } from "../intake/intake.repository.ts";

/** What a page view needs of a form: never its secret, nor its count. */
export type PageForm = Omit<IntakeForm, "captchaSecret" | "submissions" | "storedIsClosed">;

/** A safety net only: every change that alters a view is announced (docs/decisions.md). */
const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;
const WRITES_POLL_MS = 50;
const FORM_PREFIX = formChange.form("");
const ORGANIZATION_PREFIX = formChange.organization("");

/**
 * The forms of the hosted pages, kept in memory so that a page view makes no round trip to the
 * store. Exact: every change to what a view shows (an update or deletion, a plan change) is
 * announced to every instance and dropped here before the change returns; a form that a
 * submission could close (it has a limit of responses) is never kept; an entry never outlives
 * the form's deadline; and while either LISTEN connection is down nothing is kept, so no
 * announcement can be missed.
 */
export class FormViewCache implements FormChangeListener {
  readonly db: Database;
  #entries = new Map<string, { form: PageForm; expiresAt: number }>();
  #listenerPid = 0;
  #formsHeard = false;
  #keysHeard = false;
  /** Moves each time the forms' LISTEN connection is made or lost. */
  #connections = 0;
  /** Moves on every change, so that a read racing one does not store what it read before. */
  #generation = 0;
  readonly #confirmations = new Map<string, () => void>();
  readonly #stops: (() => unknown)[];

  constructor(db: Database) {
    this.db = db;
    const stopForms = db.listen(FORM_CHANGES_CHANNEL, {
      message: (payload) => this.#heard(payload),
      connected: (pid) => {
        this.#startOver();
        this.#listenerPid = pid ?? 0;
        void this.#hearFormsOnceWritesEnd(++this.#connections);
      },
      disconnected: () => {
        this.#connections++;
        this.#formsHeard = false;
        this.#listenerPid = 0;
        this.#startOver();
      },
    });
    // A plan change is announced as a key change (announceKeyChange): this listener confirms it.
    const stopKeys = db.listen(KEY_CHANGES_CHANNEL, {
      message: (change) => {
        this.forget(change);
        confirmKeyChange(db, change).catch(() => {});
      },
      connected: () => {
        this.#startOver();
        this.#keysHeard = true;
      },
      disconnected: () => {
        this.#keysHeard = false;
        this.#startOver();
      },
    });
    this.#stops = [
      stopForms,
      stopKeys,
      hearFormChangesOfThisProcess(this),
      hearKeyChangesOfThisProcess(this),
    ];
  }

  /**
   * A writer that counted the listeners before this one connected sends it nothing (see
   * announceColumn): nothing is kept until every transaction open on this database at connection
   * has ended. Only this database's: a long transaction of another application sharing the server
   * cannot write our forms, and would otherwise keep every view reading the store while it runs.
   */
  async #hearFormsOnceWritesEnd(connection: number) {
    if (this.db.kind !== "postgres") {
      this.#formsHeard = true;
      return;
    }
    try {
      const open = await openTransactions(this.db);
      while (!(await haveEnded(this.db, open))) await sleep(WRITES_POLL_MS);
    } catch {
      return; // The store is unreachable: its listener is about to be lost and connected again.
    }
    if (connection === this.#connections) this.#formsHeard = true;
  }

  get listenerPid() {
    return this.#listenerPid;
  }

  /** The form as a view shows it when it is held in memory and fresh; else undefined. */
  held(formId: string): PageForm | undefined {
    const cached = this.#entries.get(formId);
    return cached && cached.expiresAt > Date.now() ? cached.form : undefined;
  }

  /** The form as a view shows it: from memory when known and fresh, else from `load`. */
  async form(formId: string, load: () => Promise<IntakeForm | null>): Promise<PageForm | null> {
    const held = this.held(formId);
    if (held) return held;
    if (!(this.#formsHeard && this.#keysHeard)) return load();
    const generation = this.#generation;
    const now = Date.now();
    const loaded = await load();
    if (!loaded) return null;
    const {
      captchaSecret: _secret,
      submissions: _count,
      storedIsClosed: _stored,
      ...form
    } = loaded;
    // Only hosted forms: their changes alone are announced (forms.repository.ts). The others'
    // pages (a 404, an endpoint form's thank-you page) read the store. So do the views of a form
    // with a limit of responses: any submission may close it, and the intake announces nothing.
    const settings = settingsWithDefaults(form.settings);
    const limited = settings.limitResponses && settings.maxResponses !== null;
    const kept = form.type === "hosted" && !limited;
    if (kept && this.#formsHeard && this.#keysHeard && generation === this.#generation) {
      // An open form's deadline closes it without an announcement: its entry ends there.
      const deadline = form.isClosed ? null : form.autoCloseAt?.getTime();
      const expiresAt = Math.min(now + TTL_MS, deadline ?? Number.POSITIVE_INFINITY);
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(formId, { form, expiresAt });
    }
    return form;
  }

  forget(change: string) {
    this.#generation++;
    const formId = change.slice(FORM_PREFIX.length);
    if (change === formChange.form(formId)) {
      this.#entries.delete(formId);
      return;
    }
    if (!change.startsWith(ORGANIZATION_PREFIX)) return;
    for (const [id, { form }] of this.#entries) {
      if (change === formChange.organization(form.organizationId)) this.#entries.delete(id);
    }
  }

  onConfirmation(payload: string, confirmed: () => void): () => void {
    this.#confirmations.set(payload, confirmed);
    return () => this.#confirmations.delete(payload);
  }

  #heard(payload: string) {
    const read = readPayload(payload);
    if ("confirms" in read) {
      this.#confirmations.get(read.confirms)?.();
      return;
    }
    this.forget(read.change);
    // The announcer dropped its own process's entries already; every other instance waits for.
    if (this.db.kind === "postgres" && read.announcerPid !== this.#listenerPid) {
      confirmChange(this.db, FORM_CHANGES_CHANNEL, confirmationOf(payload)).catch(() => {});
    }
  }

  #startOver() {
    this.#generation++;
    this.#entries.clear();
  }

  async close() {
    this.#entries.clear();
    await Promise.all(this.#stops.map((stop) => stop()));
  }
}
