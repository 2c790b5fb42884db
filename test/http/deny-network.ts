import dns from "node:dns";
import net from "node:net";

/**
 * Loaded with `--import` into a tool that a test runs, so that the tool cannot reach the network:
 * every attempt is written to stderr (for the test to see, even if the tool swallows the error)
 * and fails.
 */
function refuse(what: string): never {
  process.stderr.write(`deny-network: ${what} refused\n`);
  throw new Error(`deny-network: ${what} refused`);
}

net.Socket.prototype.connect = () => refuse("a socket connection");
dns.lookup = (() => refuse("a DNS lookup")) as unknown as typeof dns.lookup;
dns.promises.lookup = async () => refuse("a DNS lookup");
globalThis.fetch = async (input) => refuse(`fetch ${String(input)}`);
