import { EventEmitter } from "node:events";
import type { Queryable } from "../../src/db/database.ts";
import { spareCapacity } from "../../src/jobs/spare-capacity.ts";
import { outboxJson } from "../../src/notifications/event-outbox.repository.ts";
import type { SubmissionEvent } from "../../src/notifications/submission-events.ts";
import { buildTestApp } from "../helpers.ts";
import { newForm } from "../intake/intake-fixtures.ts";
import { eventsWithoutQueue } from "../intake/test-implementations.ts";

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const silentLog = { warn() {} };

/** A relay name of the tests' own: no app's relay takes its events (for 5 s, see takeEvents). */
export const RELAY = "relay-deferral-test";

/** The intake's events, relayed as RELAY, without a queue: emails are recorded skipped. */
export const relayEvents = {
  ...eventsWithoutQueue({ mailFrom: "formdeck@acme.test" }),
  relay: RELAY,
};

/** The forms' events still in the outbox. */
export async function waiting(db: Queryable, formIds: string | string[]) {
  const [row] = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM submission_events_outbox WHERE form_id = ANY($1)",
    [[formIds].flat()],
  );
  return row?.n ?? -1;
}

/** `count` events of the form in the outbox for RELAY, as the intake's statement writes them. */
export async function addEvents(db: Queryable, formId: string, count: number) {
  const now = new Date().toISOString();
  const event: SubmissionEvent = {
    form: {
      id: formId,
      name: "Deferred",
      plan: "free",
      settings: { emailsToNotify: ["owner@acme.test"] },
    } as SubmissionEvent["form"],
    submission: {
      id: "sub_AAAAAAAAAAAAAAAAAAAAAA",
      formId,
      isSpam: false,
      spamReason: null,
      answers: [],
      files: [],
      meta: { ip: null, country: null, userAgent: null, referrer: null },
      createdAt: now,
      updatedAt: now,
    },
    isSpam: false,
  };
  await db.query(
    `INSERT INTO submission_events_outbox (form_id, event, relay)
     SELECT $1, $2::text::jsonb, $3 FROM generate_series(1, $4)`,
    [formId, outboxJson(event), RELAY, count],
  );
}

/**
 * How many of the forms' events wait in all, each time it changes, with the time it changed at
 * (ms from the start), until none wait or `boundMs` has passed. Counts are seen late, never early.
 */
export async function countsOverTime(db: Queryable, formIds: string | string[], boundMs: number) {
  const started = performance.now();
  const seen: [number, number][] = [];
  while (performance.now() - started < boundMs) {
    const n = await waiting(db, formIds);
    if (seen.at(-1)?.[0] !== n) seen.push([n, performance.now() - started]);
    if (n === 0) break;
    await sleep(20);
  }
  return seen;
}

/** Requests in flight that saturate the instance, and a way to ease them. */
export async function saturated() {
  const capacity = spareCapacity();
  const inFlight = Array.from({ length: 16 }, () => new EventEmitter());
  for (const response of inFlight) capacity.track(response);
  await sleep(250);
  const ease = () => {
    for (const response of inFlight) response.emit("close");
  };
  return { capacity, ease };
}

/** Forms of a closed app: only a relay of the test's own takes RELAY's events. */
export async function formsWithoutRelay(count: number) {
  const built = await buildTestApp();
  const forms: string[] = [];
  for (let i = 0; i < count; i++) {
    forms.push((await newForm(built.app, { emailsToNotify: ["owner@acme.test"] })).id);
  }
  await built.close();
  return { db: built.db, forms };
}
