import type { IncomingHttpHeaders } from "node:http";
import ipaddr from "ipaddr.js";
import {
  type DomainRule,
  type IpRange,
  type ListParse,
  parseCountryList,
  parseDomainList,
  parseIpList,
} from "../http/list-formats.ts";

/**
 * A form's lists, parsed once per distinct value: a busy form's 1,000-entry blacklist is not read
 * again for every submission. Bounded, so that many forms cannot grow it without limit.
 */
function cached<T>(parse: (value: string) => ListParse<T>) {
  const cache = new Map<string, T[]>();
  return (value: string): T[] => {
    let entries = cache.get(value);
    if (!entries) {
      const parsed = parse(value);
      // Stored values were checked on write; one that no longer parses is no rule at all.
      entries = "entries" in parsed ? parsed.entries : [];
      if (cache.size >= 1_000) cache.clear();
      cache.set(value, entries);
    }
    return entries;
  };
}

const ipRanges = cached(parseIpList);
const domainRules = cached(parseDomainList);
const countryCodes = cached(parseCountryList);

/** The client address in each form it may be listed in: an IPv4-mapped IPv6 address is its IPv4 one too. */
function addressForms(ip: string): (ipaddr.IPv4 | ipaddr.IPv6)[] {
  if (!ipaddr.isValid(ip)) return [];
  const address = ipaddr.parse(ip);
  if (address instanceof ipaddr.IPv6) {
    return address.isIPv4MappedAddress() ? [address, address.toIPv4Address()] : [address];
  }
  return [address, address.toIPv4MappedAddress()];
}

export function isBlacklisted(ip: string, ipBlacklist: string): boolean {
  const ranges: IpRange[] = ipRanges(ipBlacklist);
  if (ranges.length === 0) return false;
  const forms = addressForms(ip);
  return ranges.some(([range, bits]) =>
    forms.some((address) => address.kind() === range.kind() && address.match(range, bits)),
  );
}

/** Whether a client in `country` (null: unknown) may submit; an unknown country may not when a list is set. */
export function isCountryAllowed(country: string | null, allowedCountries: string): boolean {
  const codes = countryCodes(allowedCountries);
  return codes.length === 0 || (country !== null && codes.includes(country.toUpperCase()));
}

/** The URL in the request's `Origin`, else its `Referer`; null when neither is a URL. */
function sourceUrl(headers: IncomingHttpHeaders): URL | null {
  for (const name of ["origin", "referer"] as const) {
    const value = headers[name];
    if (typeof value === "string" && value !== "null" && URL.canParse(value)) return new URL(value);
  }
  return null;
}

/** Whether `url` is on the host the request was sent to, default ports read as such. */
function isOwnOrigin(url: URL, ownHost: string): boolean {
  const own = `${url.protocol}//${ownHost}`;
  return URL.canParse(own) && new URL(own).host === url.host;
}

function hostAllowed(hostname: string, rules: DomainRule[]): boolean {
  const host = hostname.toLowerCase();
  return rules.some((rule) =>
    rule.subdomains ? host.endsWith(`.${rule.host}`) : host === rule.host,
  );
}

/**
 * Check 9's domain rule: `allowedDomains` empty, or the page that posted is on an allowed host.
 * The service's own origin (the host the request was sent to) always is: hosted pages post from it.
 */
export function isSourceAllowed(
  headers: IncomingHttpHeaders,
  ownHost: string,
  allowedDomains: string,
): boolean {
  const rules = domainRules(allowedDomains);
  if (rules.length === 0) return true;
  const source = sourceUrl(headers);
  if (!source) return false;
  return isOwnOrigin(source, ownHost) || hostAllowed(source.hostname, rules);
}

/**
 * The `Access-Control-Allow-Origin` to answer with, or null for none: the request's `Origin` when
 * the form's `allowedDomains` is empty or allows it (`allowedDomains` null: no form known, so no
 * rule).
 */
export function corsOrigin(
  origin: string | undefined,
  ownHost: string,
  allowedDomains: string | null,
): string | null {
  if (!origin || origin === "null" || !URL.canParse(origin)) return null;
  if (allowedDomains === null) return origin;
  const rules = domainRules(allowedDomains);
  if (rules.length === 0) return origin;
  const url = new URL(origin);
  return isOwnOrigin(url, ownHost) || hostAllowed(url.hostname, rules) ? origin : null;
}
