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
 * A column for a statement's RETURNING that announces its change and names how many other
 * instances listen (the announcer's own connection aside), for the row it returns: 0 unless `when`
 * holds for that row. Parameters `$first` to `$first + 3` (announceParams).
 *
 * The count reads `pg_stat_activity`, whose snapshot of every backend was the dearest part of an
 * update (a third of its time in the store): as an uncorrelated subquery under `CASE WHEN`, it runs
 * at most once per statement however many rows it writes, and only for a row `when` holds for, so
 * that a change no view shows (an endpoint form's) never pays it. Only when other instances listen
 * is the notification sent (it goes out when the transaction commits): NOTIFY makes PostgreSQL
 * commit notifying transactions one at a time, which a single instance need not pay for;
 * `pg_notify`'s void, as text, is the empty string, so that prefixing it to the count sends it as
 * part of the value. An instance that starts listening after the count waits for the writes under
 * way to end before it keeps anything (see FormViewCache). Costs no round trip of its own.
 */
export const announceColumn = (first: number, when: string) =>
  announcing(when, {
    channel: `$${first}`,
    payload: `$${first + 1}`,
    listenerName: `$${first + 2}`,
    ownPid: `$${first + 3}`,
  });

export const announceParams = (announcement: Announcement) => [
  announcement.channel,
  announcement.payload,
  announcement.listenerName,
  announcement.ownListenerPid,
];

/**
 * announceColumn for a statement of several changes (statement-items.ts), each with its own
 * payload, the column `payload_in` of its items. Parameters `$first` to `$first + 2`
 * (announceEachParams).
 */
export const announceEachColumn = (first: number, when: string) =>
  announcing(when, {
    channel: `$${first}`,
    payload: "item.payload_in",
    listenerName: `$${first + 1}`,
    ownPid: `$${first + 2}`,
  });

export const announceEachParams = (announcement: Announcement) => [
  announcement.channel,
  announcement.listenerName,
  announcement.ownListenerPid,
];

function announcing(
  when: string,
  sql: { channel: string; payload: string; listenerName: string; ownPid: string },
) {
  // Uncorrelated, so planned as an InitPlan: run once, when first needed; both uses read the
  // same snapshot of the backends, which a transaction takes once.
  const listeners = `(SELECT count(*)::int FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = ${sql.listenerName}
        AND pid <> ${sql.ownPid})`;
  return `CASE WHEN ${when} AND ${listeners} > 0
     THEN (pg_notify(${sql.channel}, ${sql.payload})::text || ${listeners})::int
     ELSE 0 END AS listeners`;
}

/** Tells the announcing instance that this one has dropped what `payload` names. */
export async function confirmChange(db: Queryable, channel: string, payload: string) {
  await db.query("SELECT pg_notify($1, $2)", [channel, payload]);
}

/** Transactions, each by its backend's pid and its start (`xact_start`), as text. */
export interface OpenTransactions {
  pids: number[];
  startedAt: string[];
}

/**
 * The transactions open now on this database but the caller's own. Those of other databases are
 * left out: they cannot write this one's forms.
 */
export async function openTransactions(db: Queryable): Promise<OpenTransactions> {
  const rows = await db.query<{ pid: number; started_at: string }>(
    `SELECT pid, xact_start::text AS started_at FROM pg_stat_activity
      WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`,
  );
  return { pids: rows.map((row) => row.pid), startedAt: rows.map((row) => row.started_at) };
}

/** Whether every transaction of `open` has ended (its backend is gone or in another one). */
export async function haveEnded(db: Queryable, open: OpenTransactions): Promise<boolean> {
  if (open.pids.length === 0) return true;
  const rows = await db.query<{ ended: boolean }>(
    `SELECT NOT EXISTS (
       SELECT 1 FROM pg_stat_activity AS activity
         JOIN unnest($1::int[], $2::timestamptz[]) AS open (pid, started_at)
           ON activity.pid = open.pid AND activity.xact_start = open.started_at
     ) AS ended`,
    [open.pids, open.startedAt],
  );
  return rows[0]?.ended === true;
}
