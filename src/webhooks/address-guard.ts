import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, buildConnector } from "undici";

/** Every address a host name resolves to. Injected so that tests resolve names themselves. */
export type HostLookup = (hostname: string) => Promise<string[]>;

export const systemLookup: HostLookup = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export interface AddressPolicy {
  lookup: HostLookup;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: receivers on the operator's own network (and tests). */
  allowPrivateNetworks: boolean;
}

/** An attempt refused before connecting; its message is the attempt's recorded error. */
export class AddressNotAllowedError extends Error {
  constructor(address: string) {
    super(`address not allowed: ${address}`);
  }
}

/**
 * Only public unicast addresses: whatever ipaddr.js's `range()` calls otherwise (loopback,
 * private, link-local, CGNAT, multicast, reserved, unique-local, IPv4-mapped and the embedded
 * IPv4 forms of 6to4, Teredo and NAT64...) may reach something of the operator's own.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.parse(address).range() === "unicast";
}

/** `[::1]` as a URL's hostname writes it: the address without brackets. */
const unbracketed = (hostname: string) => hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * The IP address a URL's host names, if it is one. WHATWG URL parsing has already turned
 * `127.1`, `0x7f000001` and `2130706433` into `127.0.0.1`, and compressed IPv6.
 */
export function literalAddressOf(url: URL): string | null {
  const host = unbracketed(url.hostname);
  return isIP(host) ? host : null;
}

/** The address to connect to: one the host resolves to, once every one of them is allowed. */
export async function checkedAddress(hostname: string, policy: AddressPolicy): Promise<string> {
  const host = unbracketed(hostname);
  const addresses = isIP(host) ? [host] : await policy.lookup(host);
  const [first] = addresses;
  if (first === undefined) throw new Error(`${host}: the name resolves to no address`);
  if (!policy.allowPrivateNetworks) {
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (refused !== undefined) throw new AddressNotAllowedError(refused);
  }
  return first;
}

/**
 * An undici dispatcher whose every new connection goes to an address checked just before: the
 * host is resolved here, not again by the socket, so an answer that changes between the check
 * and the connection (DNS rebinding) cannot reach a refused address. TLS still verifies the
 * certificate against the host name.
 */
export function guardedAgent(policy: AddressPolicy, connectTimeoutMs: number): Agent {
  const connect = buildConnector({ timeout: connectTimeoutMs });
  return new Agent({
    connect(options, callback) {
      const host = unbracketed(options.hostname);
      checkedAddress(host, policy).then(
        (address) =>
          connect(
            {
              ...options,
              hostname: address,
              servername: options.servername ?? (isIP(host) ? undefined : host),
            },
            callback,
          ),
        (error: Error) => callback(error, null),
      );
    },
  });
}
