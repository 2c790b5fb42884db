import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The rate-limit bucket of a client address (as `request.ip` gives it, already normalized): the
 * address itself for IPv4, its /64 for IPv6. One subscriber is given a whole /64 (or more), so
 * keyed by address one machine could spread its requests over 2^64 buckets; keyed by /64, it has
 * one, as an IPv4 client behind its one address has.
 */
export function addressBucket(address: string): string {
  if (isIP(address) !== 6) return `address:${address}`;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `address:${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
