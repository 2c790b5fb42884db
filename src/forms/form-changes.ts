import { randomUUID } from "node:crypto";
import { listenerName, type Queryable } from "../db/database.ts";
import type { Announcement } from "./form-changes.repository.ts";

/**
 * The channel on which a change to what a form's page shows is announced to every instance, and
 * on which each instance confirms that it has dropped what the change names.
 */
export const FORM_CHANGES_CHANNEL = "formdeck_form_changes";
/** How long a change waits for the instances to confirm; one that hangs cannot hold it longer. */
const CONFIRM_TIMEOUT_MS = 2_000;
/** A confirmation is the payload it confirms, after this. */
const DONE = "done ";

/** What a change names: one form, or every form of an organization (its plan). */
export const formChange = {
  form: (formId: string) => `form:${formId}`,
  organization: (organizationId: string) => `org:${organizationId}`,
};

/**
 * An instance's cache of forms, as the announcements of this process see it: it is told of every
 * change made here at once, and hears other instances' confirmations on its LISTEN connection.
 */
export interface FormChangeListener {
  readonly db: Queryable;
  /** The backend pid of its LISTEN connection; 0 while it is not listening. */
  readonly listenerPid: number;
  forget(change: string): void;
  /** Calls `confirmed` for each confirmation of `payload`, until the returned function is called. */
  onConfirmation(payload: string, confirmed: () => void): () => void;
}

const listenersOfThisProcess = new Set<FormChangeListener>();

export function hearFormChangesOfThisProcess(listener: FormChangeListener): () => void {
  listenersOfThisProcess.add(listener);
  return () => listenersOfThisProcess.delete(listener);
}

/** A notification's parts: the change, the pid that needs no confirmation, or a confirmation. */
export function readPayload(
  payload: string,
): { confirms: string } | { change: string; announcerPid: number } {
  if (payload.startsWith(DONE)) return { confirms: payload.slice(DONE.length) };
  const [change = "", pid = "0"] = payload.split(" ");
  return { change, announcerPid: Number(pid) };
}

export const confirmationOf = (payload: string) => `${DONE}${payload}`;

/**
 * Runs `write`, which makes a change and announces it in its statement (announceColumn; it sets
 * `listeners` from that statement), and returns once every cache has dropped what `change`
 * names: in this process at once, and in every other listening instance when it confirms (or
 * after a short timeout, for one that hangs). So the next view anywhere sees the change. Only a
 * server, which has a listener, can wait for other instances; the embedded store has one process.
 */
export async function announceFormChange<T>(
  db: Queryable,
  change: string,
  write: (announcement: Announcement) => Promise<T>,
): Promise<T> {
  const own = [...listenersOfThisProcess].find((listener) => listener.db === db);
  const ownListenerPid = own?.listenerPid ?? 0;
  const announcement: Announcement = {
    channel: FORM_CHANGES_CHANNEL,
    // Unique: a confirmation of an earlier announcement of the same change does not count.
    payload: `${change} ${ownListenerPid} ${randomUUID()}`,
    listenerName: listenerName(FORM_CHANGES_CHANNEL),
    ownListenerPid,
    listeners: 0,
  };
  let confirmations = 0;
  let counted = false;
  let allConfirmed: () => void = () => {};
  const confirmed = new Promise<void>((resolve) => {
    allConfirmed = resolve;
  });
  // Heard from before the write: an instance may confirm before the write's answer arrives.
  const stop = own?.onConfirmation(announcement.payload, () => {
    confirmations++;
    if (counted && confirmations >= announcement.listeners) allConfirmed();
  });
  const forgetHere = () => {
    for (const listener of listenersOfThisProcess) listener.forget(change);
  };
  try {
    const result = await write(announcement).catch((error: unknown) => {
      // A write that failed may still have committed before its failure reached us.
      forgetHere();
      throw error;
    });
    counted = true;
    forgetHere();
    if (own && confirmations < announcement.listeners) {
      await Promise.race([confirmed, timeout()]);
    }
    return result;
  } finally {
    stop?.();
  }
}

const timeout = () =>
  new Promise<void>((resolve) => setTimeout(resolve, CONFIRM_TIMEOUT_MS).unref());
