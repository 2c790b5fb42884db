/**
 * String formats checked on input. Each answers whether a value is acceptable; the empty string,
 * where a member's default is empty, means "not set" and is accepted by the format itself.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;
const COLOR = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
// A syntactic check, as decisions ask: one @, no spaces or control characters, a dotted domain.
const EMAIL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  /^[^\s@"(),:;<>[\\\]\u0000-\u001f\u007f-\u009f]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

export function isDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  // Date.UTC rolls 2026-02-30 over to March; a real date survives the round trip.
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

export const isTime = (value: string): boolean => TIME.test(value);

export const isColor = (value: string): boolean => COLOR.test(value);

export const isEmail = (value: string): boolean => value.length <= 254 && EMAIL.test(value);

// C0 and C1 controls (U+0085 is a line break too), DEL, and the Unicode line and paragraph
// separators: none has a place in a one-line text, and CR or LF in an email header starts another.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const BREAK_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Text that can go into an email header as it is: one line, no control characters. */
export const isSingleLine = (value: string): boolean => !BREAK_OR_CONTROL.test(value);

const zoneCache = new Map<string, boolean>();

/** An IANA zone the runtime can compute times in; `UTC` and aliases such as `Asia/Kolkata` too. */
export function isTimeZone(value: string): boolean {
  // Names only: the runtime also takes offsets such as `+05:30`, which are not IANA zones.
  if (!/^[A-Za-z]/.test(value)) return false;
  let known = zoneCache.get(value);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: value });
      known = true;
    } catch {
      known = false;
    }
    // Only valid zones are cached, so hostile input cannot grow the cache without bound.
    if (known) zoneCache.set(value, known);
  }
  return known;
}

// Written out as `scheme://…`, with no space or control character: URL parsing silently drops
// tabs, line breaks and surrounding spaces, and reads `https:\\host` or `http:/host` as absolute,
// so a value it accepts could still be stored with a line break, or be read by a browser otherwise.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const URL_TEXT = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\u0000-\u0020\u007f]+$/;

/** An absolute URL with one of `protocols` and a host. */
export function isAbsoluteUrl(value: string, protocols: readonly string[]): boolean {
  if (!URL_TEXT.test(value) || !URL.canParse(value)) return false;
  const url = new URL(value);
  return protocols.includes(url.protocol) && url.hostname !== "";
}

// Seconds and their fraction are optional; the zone is not: without one, an instant is ambiguous.
// A space in the zone's place is a `+` that the query string decoded, as it decodes every `+`.
const INSTANT =
  /^(?<date>\d{4}-\d{2}-\d{2})[Tt](?<hh>\d{2}):(?<mm>\d{2})(?::(?<ss>\d{2})(?:\.(?<fraction>\d{1,9}))?)?(?:[Zz]|(?<sign>[+ -])(?<zh>\d{2}):?(?<zm>\d{2}))$/;
const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00.000Z");
const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * An ISO 8601 instant (a date, a time and a zone), such as `2026-11-22T04:51:21.123Z` or
 * `2026-11-22T05:51+01:00`, or null. Fractions finer than a millisecond are cut off. Instants
 * outside years 1 to 9999 UTC are refused: the stores cannot all read them.
 */
export function parseInstant(value: string): Date | null {
  const parts = INSTANT.exec(value)?.groups;
  if (!parts) return null;
  const { date = "", hh, mm, ss = "00", fraction = "", sign, zh = "00", zm = "00" } = parts;
  const inRange = [
    [hh, 23],
    [mm, 59],
    [ss, 59],
    [zh, 23],
    [zm, 59],
  ] as const;
  if (!isDate(date) || inRange.some(([field, max]) => Number(field) > max)) return null;
  const offset = sign === undefined ? "Z" : `${sign === "-" ? "-" : "+"}${zh}:${zm}`;
  const milliseconds = fraction.slice(0, 3).padEnd(3, "0");
  const instant = new Date(`${date}T${hh}:${mm}:${ss}.${milliseconds}${offset}`);
  const time = instant.getTime();
  return time >= FIRST_INSTANT && time <= LAST_INSTANT ? instant : null;
}
