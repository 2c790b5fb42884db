import type { IncomingHttpHeaders } from "node:http";

export interface CountryResolver {
  /**
   * The client's ISO 3166-1 alpha-2 country in upper case, or null when unknown: from the header
   * named by `COUNTRY_HEADER` when set (a trusted proxy writes it), else from the offline
   * IP-to-country database.
   */
  countryOf(ip: string, headers: IncomingHttpHeaders): string | null;
}
