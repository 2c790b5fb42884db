/** Date.UTC, except that years 0 to 99 stay themselves instead of becoming 1900 to 1999. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second = 0) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.setUTCHours(hour, minute, second);
}

// Making a formatter costs several times more than using one, and a deadline takes three: one
// per time zone is kept. Zones are checked names (a few hundred exist, but any spelling in any
// case is accepted), so the map is emptied should it ever grow large.
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1_000;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Offset of `timeZone` from UTC at `instant`, in milliseconds. */
function zoneOffset(instant: number, timeZone: string): number {
  const parts = formatterFor(timeZone).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = utc(
    get("year"),
    get("month"),
    get("day"),
    get("hour"),
    get("minute"),
    get("second"),
  );
  return wall - Math.floor(instant / 1000) * 1000;
}

export interface AutoCloseSettings {
  autoCloseEnabled: boolean;
  autoCloseDate: string;
  autoCloseTime: string;
  autoCloseTimezone: string;
}

const DAY = 86_400_000;

/**
 * The instant at which a form closes itself, or null when auto-close is off or not fully set.
 * Wall times are read as Temporal's "compatible" disambiguation does: a time that occurs twice
 * (the night clocks go back) is its first occurrence; a time that a spring-forward gap skips is
 * read with the offset in force before the gap, so it lands just after the gap, never before it.
 */
export function autoCloseInstant(settings: AutoCloseSettings): Date | null {
  const { autoCloseEnabled, autoCloseDate, autoCloseTime, autoCloseTimezone } = settings;
  if (!autoCloseEnabled || !autoCloseDate || !autoCloseTime || !autoCloseTimezone) return null;
  const [year, month, day] = autoCloseDate.split("-").map(Number) as [number, number, number];
  const [hour, minute] = autoCloseTime.split(":").map(Number) as [number, number];
  const wall = utc(year, month, day, hour, minute);
  // The offsets a day either side are the two in play around any transition.
  const offsets = [
    zoneOffset(wall - DAY, autoCloseTimezone),
    zoneOffset(wall + DAY, autoCloseTimezone),
  ];
  const matching = offsets
    .map((offset) => wall - offset)
    .filter((instant) => instant + zoneOffset(instant, autoCloseTimezone) === wall);
  const instant = matching.length > 0 ? Math.min(...matching) : wall - Math.min(...offsets);
  return new Date(instant);
}
