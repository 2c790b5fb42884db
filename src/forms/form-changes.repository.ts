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
 * Columns for a statement's RETURNING (or SELECT) that announce its change, parameters `$first`
 * to `$first + 3` (announceParams): the notification goes out when the transaction commits, and
 * the listeners are counted before, so an instance that starts listening later starts with
 * nothing cached. Costs no round trip of its own.
 */
export const announceColumns = (first: number) =>
  `pg_notify($${first}, $${first + 1}) IS NULL AS announced,
   (SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database()
      AND application_name = $${first + 2} AND pid <> $${first + 3}) AS listeners`;

export const announceParams = (announcement: Announcement) => [
  announcement.channel,
  announcement.payload,
  announcement.listenerName,
  announcement.ownListenerPid,
];

/** Announces a change that no statement of its own carries (a form's count reaching a limit). */
export async function announceAlone(db: Queryable, announcement: Announcement): Promise<void> {
  const rows = await db.query<{ listeners: number }>(
    `SELECT ${announceColumns(1)}`,
    announceParams(announcement),
  );
  announcement.listeners = rows[0]?.listeners ?? 0;
}

/** Tells the announcing instance that this one has dropped what `payload` names. */
export async function confirmChange(db: Queryable, channel: string, payload: string) {
  await db.query("SELECT pg_notify($1, $2)", [channel, payload]);
}
