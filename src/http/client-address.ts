import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { FastifyInstance } from "fastify";
import ipaddr from "ipaddr.js";

/**
 * Which peers are reverse proxies whose `X-Forwarded-For` is believed: none (`false`), the
 * nearest `n` hops, or the peers at these addresses and ranges (`10.0.0.0/8`, `::1`).
 */
export type TrustProxy = false | number | readonly string[];

/** Ranges an operator may name instead of writing them out, as Fastify's `trustProxy` allows. */
const NAMED_RANGES: Record<string, readonly string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The ranges `entry` stands for (an address, a CIDR range or a name); null when it is none. */
export function proxyRanges(entry: string): Range[] | null {
  const named = NAMED_RANGES[entry];
  if (named) return named.map((cidr) => ipaddr.parseCIDR(cidr));
  const [address = "", bits, ...rest] = entry.split("/");
  if (rest.length > 0 || isIP(address) === 0) return null;
  const parsed = ipaddr.parse(address);
  const maxBits = parsed.kind() === "ipv4" ? 32 : 128;
  if (bits === undefined) return [[parsed, maxBits]];
  if (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > maxBits) return null;
  return [[parsed, Number(bits)]];
}

/**
 * The address as one canonical text: IPv4 in dotted decimal (an IPv4-mapped IPv6 address such as
 * `::ffff:192.0.2.1` included), IPv6 in RFC 5952's compressed lower-case form without a zone.
 * Null for anything that is not an IP address (a name, a port suffix, brackets, garbage).
 */
export function normalizeAddress(text: string): string | null {
  const kind = isIP(text);
  if (kind === 4) return text;
  if (kind !== 6) return null;
  const address = ipaddr.IPv6.parse(text.split("%")[0] as string);
  return address.isIPv4MappedAddress() ? address.toIPv4Address().toString() : address.toString();
}

/** Whether the peer at `address`, `hop` steps from this server (0: the socket), is a proxy. */
export type TrustFunction = (address: string, hop: number) => boolean;

export function trustFunction(trust: TrustProxy): TrustFunction | null {
  if (trust === false) return null;
  if (typeof trust === "number") return (_address, hop) => hop < trust;
  const ranges = trust.flatMap((entry) => proxyRanges(entry) ?? []);
  return (address) => {
    const normalized = normalizeAddress(address);
    if (normalized === null) return false;
    const parsed = ipaddr.parse(normalized);
    return ranges.some(
      ([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits),
    );
  };
}

/**
 * The client's address: walking `X-Forwarded-For` from the right (the entry the nearest proxy
 * wrote) for as long as the peer is a trusted proxy, the first address that is not. Entries left
 * of it were written by the client and are never read. When that entry is not a valid IP
 * address, the socket's address is used: a proxy that writes garbage names no client.
 */
export function clientAddress(raw: IncomingMessage, trust: TrustFunction | null): string {
  const socketAddress = raw.socket?.remoteAddress ?? "";
  const fromSocket = normalizeAddress(socketAddress) ?? socketAddress;
  const header = raw.headers["x-forwarded-for"];
  if (trust === null || typeof header !== "string" || !trust(socketAddress, 0)) return fromSocket;
  let end = header.length;
  let seen: string = socketAddress;
  for (let hop = 1; end > 0; hop++) {
    const comma = header.lastIndexOf(",", end - 1);
    const entry = header.slice(comma + 1, end).trim();
    end = Math.max(comma, 0);
    seen = entry;
    // The leftmost entry stands, trusted or not: nothing said who sent it to the proxy.
    if (comma < 0 || !trust(entry, hop)) break;
  }
  return normalizeAddress(seen) ?? fromSocket;
}

/**
 * Makes `request.ip` the client's address as clientAddress computes it, for every request, before
 * any other hook reads it. Fastify's own reading trusts an entry whatever it holds.
 */
export function registerClientAddress(app: FastifyInstance, trust: TrustProxy) {
  const trusts = trustFunction(trust);
  app.addHook("onRequest", (request, _reply, done) => {
    Object.defineProperty(request, "ip", { value: clientAddress(request.raw, trusts) });
    done();
  });
}
