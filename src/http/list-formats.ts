import ipaddr from "ipaddr.js";

/**
 * The comma-separated lists of a form's protection settings (submissions.md section 1). Each
 * parser answers the entries, or why the value is refused, in the words of a `<member>: <reason>`
 * message. The empty string is the empty list: no rule.
 */
export type ListParse<T> = { entries: T[] } | { reason: string };

export const MAX_ALLOWED_DOMAINS = 100;
export const MAX_IP_BLACKLIST = 1_000;

/** Entries separated by commas, spaces around them ignored; null when one is empty. */
function splitList(value: string): string[] | null {
  if (value.trim() === "") return [];
  const entries = value.split(",").map((entry) => entry.trim());
  return entries.includes("") ? null : entries;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isHostName(name: string): boolean {
  return name.length <= 253 && name.split(".").every((label) => LABEL.test(label));
}

export interface DomainRule {
  /** Lower case, without the `*.` of a wildcard. */
  host: string;
  /** `*.example.com`: every subdomain of example.com, not example.com itself. */
  subdomains: boolean;
}

export function parseDomainList(value: string): ListParse<DomainRule> {
  const entries = splitList(value);
  if (!entries) return { reason: "must be host names separated by commas, with no empty entry" };
  if (entries.length > MAX_ALLOWED_DOMAINS) {
    return { reason: `must have at most ${MAX_ALLOWED_DOMAINS} host names` };
  }
  const rules: DomainRule[] = [];
  for (const entry of entries) {
    const lower = entry.toLowerCase();
    const subdomains = lower.startsWith("*.");
    const host = subdomains ? lower.slice(2) : lower;
    if (!isHostName(host)) {
      return {
        reason: `"${shorten(entry)}" is not a host name (no scheme, port or path; *.example.com for subdomains; xn-- for international names)`,
      };
    }
    rules.push({ host, subdomains });
  }
  return { entries: rules };
}

export type IpRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // Only the dotted four-part form for IPv4: ipaddr.js also reads `0x7f.1` and `127.1`.
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes("%") && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

function parseRange(entry: string): IpRange | null {
  const [text = "", prefix, extra] = entry.split("/");
  if (extra !== undefined) return null;
  const address = parseAddress(text);
  if (!address) return null;
  const bits = address.kind() === "ipv4" ? 32 : 128;
  if (prefix === undefined) return [address, bits];
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return null;
  return [address, Number(prefix)];
}

export function parseIpList(value: string): ListParse<IpRange> {
  const entries = splitList(value);
  if (!entries) {
    return {
      reason: "must be IP addresses or CIDR ranges separated by commas, with no empty entry",
    };
  }
  if (entries.length > MAX_IP_BLACKLIST) {
    return { reason: `must have at most ${MAX_IP_BLACKLIST} addresses or ranges` };
  }
  const ranges: IpRange[] = [];
  for (const entry of entries) {
    const range = parseRange(entry);
    if (!range) return { reason: `"${shorten(entry)}" is not an IP address or CIDR range` };
    ranges.push(range);
  }
  return { entries: ranges };
}

// ISO 3166-1 alpha-2, the 249 assigned codes, and XK (Kosovo), which IP-to-country databases use.
const COUNTRIES = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS
  BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE
  EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM
  HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC
  LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA
  NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW
  SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO
  TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW`.split(/\s+/),
);

/** Upper-case country codes. */
export function parseCountryList(value: string): ListParse<string> {
  const entries = splitList(value);
  if (!entries) {
    return { reason: "must be country codes separated by commas, with no empty entry" };
  }
  const codes: string[] = [];
  for (const entry of entries) {
    const code = entry.toUpperCase();
    if (!COUNTRIES.has(code)) {
      return { reason: `"${shorten(entry)}" is not an ISO 3166-1 alpha-2 country code` };
    }
    codes.push(code);
  }
  return { entries: codes };
}

/** An entry quoted back in a message stays short, whatever was sent. */
function shorten(entry: string): string {
  return entry.length > 60 ? `${entry.slice(0, 60)}…` : entry;
}
