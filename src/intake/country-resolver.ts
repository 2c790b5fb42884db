import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { Reader, type Response } from "mmdb-lib";
import type { CountryResolver } from "./country.ts";

/** What this database's records hold (mmdb-lib types only MaxMind's own layouts). */
type CountryRecord = { country_code?: unknown };

let database: Reader<Response> | null = null;

/**
 * The offline IP-to-country database (IPv4 and IPv6, about 8 MB), read once per process on first
 * use: a lookup is then about a microsecond, with no network.
 */
function countryDatabase(): Reader<Response> {
  if (!database) {
    const file = createRequire(import.meta.url).resolve(
      "@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb",
    );
    database = new Reader(readFileSync(file));
  }
  return database;
}

/**
 * The header's two letters, upper-cased; `XX` (Cloudflare's "unknown") and a malformed value are
 * unknown (null); `undefined` when the proxy did not send the header at all.
 */
function headerCountry(value: string | string[] | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[A-Za-z]{2}$/.test(value)) return null;
  const code = value.toUpperCase();
  return code === "XX" ? null : code;
}

/**
 * An address's country by the database. Only public unicast addresses have one: the database
 * places some private blocks in a country (192.168.0.0/16 in AU), which a form's country rule
 * must never believe.
 */
export function countryOfAddress(ip: string): string | null {
  // Only the written forms a socket reports: `1.2.3` or `0x7f.1` are not a client's address.
  // Node's check, as ipaddr's own costs more than the rest of the lookup.
  if (isIP(ip) === 0) return null;
  const address = ipaddr.process(ip);
  if (address.range() !== "unicast") return null;
  const code = (countryDatabase().get(address.toString()) as CountryRecord | null)?.country_code;
  return typeof code === "string" && /^[A-Z]{2}$/.test(code) ? code : null;
}

/**
 * `countryHeader`: the header a trusted proxy writes the client's country into (such as
 * `cf-ipcountry`), or null. The proxy knows better than a table of address blocks, so its header
 * decides when present (an `XX` included); without it, the address is looked up.
 */
export function createCountryResolver(countryHeader: string | null): CountryResolver {
  const header = countryHeader?.toLowerCase() ?? null;
  return {
    countryOf(ip, headers) {
      const fromHeader = header ? headerCountry(headers[header]) : undefined;
      return fromHeader === undefined ? countryOfAddress(ip) : fromHeader;
    },
  };
}
