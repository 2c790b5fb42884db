export interface ClosingState {
  /** The manual switch as stored. */
  isClosed: boolean;
  /** A deadline still to act on, or null. */
  autoCloseAt: Date | null;
}

export interface ClosingChange {
  /** The switch as the client set it, if it did. */
  isClosed?: boolean;
  /** A new deadline (null: none), or undefined when the deadline did not change. */
  deadline?: Date | null;
}

const passed = (deadline: Date | null, now: Date) => deadline !== null && deadline <= now;

/**
 * A deadline fires once: when it has passed, the form is closed and the deadline is spent, so
 * reopening the form by hand afterwards keeps it open. A new deadline re-arms the form; one that
 * has already passed fires at once (so the store only ever holds deadlines to come), and an
 * explicit `isClosed` in the same change has the last word over it.
 */
export function nextClosingState(
  state: ClosingState,
  change: ClosingChange,
  now: Date,
): ClosingState {
  let { isClosed, autoCloseAt } = state;
  if (passed(autoCloseAt, now)) {
    isClosed = true;
    autoCloseAt = null;
  }
  if (change.deadline !== undefined) autoCloseAt = change.deadline;
  if (passed(autoCloseAt, now)) {
    isClosed = true;
    autoCloseAt = null;
  }
  if (change.isClosed !== undefined) isClosed = change.isClosed;
  return { isClosed, autoCloseAt };
}
