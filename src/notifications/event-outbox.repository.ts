import type { Queryable } from "../db/database.ts";
import { DEFAULT_SETTINGS } from "../forms/form-defaults.ts";
import type { NotifyingForm, SubmissionEvent } from "./submission-events.ts";

/** How long an event waits for its own instance's relay before any relay takes it. */
const ADOPTED_AFTER_SECONDS = 5;

/**
 * Takes up to `limit` events, oldest first, out of the outbox in `tx`: those `relay` is to relay
 * (its instance's), and those whose instance left them for more than a few seconds. Deleted when
 * `tx` commits, back for the next taker if it rolls back; events another transaction holds are
 * skipped, so relays of several instances never take one twice.
 */
export async function takeEvents(
  tx: Queryable,
  relay: string,
  limit: number,
): Promise<SubmissionEvent[]> {
  const rows = await tx.query<{ id: string; event: SubmissionEvent }>(
    `DELETE FROM submission_events_outbox
      WHERE id IN (SELECT id FROM submission_events_outbox
                    WHERE relay = $1 OR created_at < now() - make_interval(secs => $3)
                    ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING id, event`,
    [relay, limit, ADOPTED_AFTER_SECONDS],
  );
  return inOrder(rows);
}

/**
 * Takes up to `limit` events of the form, oldest first, waiting for those another relay holds:
 * once it returns fewer than `limit`, every event of the form added before is relayed, by `tx`
 * or by the one that held it.
 */
export async function takeEventsOfForm(tx: Queryable, formId: string, limit: number) {
  const rows = await tx.query<{ id: string; event: SubmissionEvent }>(
    `DELETE FROM submission_events_outbox
      WHERE id IN (SELECT id FROM submission_events_outbox WHERE form_id = $1
                    ORDER BY id LIMIT $2 FOR UPDATE)
      RETURNING id, event`,
    [formId, limit],
  );
  return inOrder(rows);
}

const defaultJson = new Map(
  Object.entries(DEFAULT_SETTINGS).map(([name, value]) => [name, JSON.stringify(value)]),
);

/** The form's part of its events, written once per settings document (a kept form shares one). */
const formJsonOf = new WeakMap<object, { form: NotifyingForm; json: string }>();

function formJson(form: NotifyingForm): string {
  const known = formJsonOf.get(form.settings);
  const same =
    known?.form.id === form.id && known.form.name === form.name && known.form.plan === form.plan;
  if (known && same) return known.json;
  const settings = Object.fromEntries(
    Object.entries(form.settings).filter(
      ([name, value]) => JSON.stringify(value) !== defaultJson.get(name),
    ),
  );
  const json = JSON.stringify({ ...form, settings });
  formJsonOf.set(form.settings, { form, json });
  return json;
}

/**
 * The event as the intake's statement writes it into the outbox: the form's settings without
 * those at their default value, put back by `inOrder` when it is taken. A form's settings are
 * most of an event (about 1.5 kB of 2 kB, mostly defaults), and every byte of it is serialized,
 * sent, parsed into jsonb, logged and, past PostgreSQL's 2 kB, compressed, on the request path of
 * every submission that notifies (docs/performance.md, "Notifications (issue 13)"). The form's
 * part is the same for every submission to a form as the intake keeps it: written once.
 */
export function outboxJson(event: SubmissionEvent): string {
  const submission = JSON.stringify(event.submission);
  return `{"form":${formJson(event.form)},"submission":${submission},"isSpam":${event.isSpam}}`;
}

/** Oldest first, each form's settings whole again (what `outboxJson` left out is a default). */
const inOrder = (rows: { id: string; event: SubmissionEvent }[]) =>
  rows
    .sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)))
    .map(({ event }) => ({
      ...event,
      form: { ...event.form, settings: { ...DEFAULT_SETTINGS, ...event.form.settings } },
    }));
