import type { Queryable } from "../db/database.ts";

/**
 * A change to announce with the statement that makes it (see form-changes.ts): NOTIFY's channel
 * and payload, and the connections to count, those that LISTEN on the channel but the
 * announcer's own (which its process has no need to hear from).
 */
export interface Announcement {
  channel: string;
  payload: string;
  listenerName: string;
  ownListenerPid: number;
  /** Set from the statement's `listeners` column: how many instances must confirm. */
  listeners: number;
}

/**
 * A one-row relation for a statement's FROM (or an UPDATE's, a DELETE's USING), `others`: how many
 * other instances listen, counted once. Parameters `$first` to `$first + 3` (announceParams).
 */
export const otherListeners = (first: number) =>
  `(SELECT count(*)::int AS listeners FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = $${first + 2}
       AND pid <> $${first + 3}) AS others`;

/**
 * Columns for a statement's RETURNING (or SELECT) that announce its change, with `others`
 * (otherListeners) in its FROM. Only when other instances listen is the notification sent (it
 * goes out when the transaction commits): NOTIFY makes PostgreSQL commit notifying transactions
 * one at a time, which a single instance need not pay for. An instance that starts listening
 * after the count waits for the writes under way to end before it keeps anything (see
 * FormViewCache). Costs no round trip of its own. `when`: a condition on the row written, for a
 * change that only some rows need announced.
 */
export const announceColumns = (first: number, when = "true") =>
  `CASE WHEN ${when} THEN others.listeners ELSE 0 END AS listeners,
   CASE WHEN ${when} AND others.listeners > 0 THEN pg_notify($${first}, $${first + 1}) END
     IS NULL AS announced`;

export const announceParams = (announcement: Announcement) => [
  announcement.channel,
  announcement.payload,
  announcement.listenerName,
  announcement.ownListenerPid,
];

/** Tells the announcing instance that this one has dropped what `payload` names. */
export async function confirmChange(db: Queryable, channel: string, payload: string) {
  await db.query("SELECT pg_notify($1, $2)", [channel, payload]);
}

/** The first transaction id not yet started: those below it are running or have ended. */
export async function transactionHorizon(db: Queryable): Promise<string> {
  const rows = await db.query<{ horizon: string }>(
    "SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS horizon",
  );
  return rows[0]?.horizon ?? "0";
}

/** Whether every transaction below `horizon` has ended (committed or rolled back). */
export async function endedBefore(db: Queryable, horizon: string): Promise<boolean> {
  const rows = await db.query<{ ended: boolean }>(
    "SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::text::xid8 AS ended",
    [horizon],
  );
  return rows[0]?.ended === true;
}
