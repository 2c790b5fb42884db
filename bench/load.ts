// The load generator, run as its own process so that it does not share an event loop (or a
// core's worth of CPU accounting) with the bench or the server it measures.
import { text } from "node:stream/consumers";
import autocannon, { type Request } from "autocannon";
import { FORMS_PATH, type LoadRequest, type LoadSpec, type LoadSummary } from "./load-spec.ts";

/** Autocannon's request list for one kind of request: every request gets a valid body. */
function requestsFor(request: LoadRequest, headers: Record<string, string>): Request[] {
  const withBody = { ...headers, "content-type": "application/json" };
  let sent = 0;
  switch (request.kind) {
    case "get":
      return [{ method: "GET", path: request.path }];
    case "get-each":
      return [
        {
          method: "GET",
          setupRequest: (req) => ({ ...req, path: `${FORMS_PATH}/${nextId(request.formIds)}` }),
        },
      ];
    case "create":
      return [
        {
          method: "POST",
          headers: withBody,
          setupRequest: (req) => {
            sent += 1;
            const body = {
              name: `Contact form ${sent}`,
              type: sent % 10 < 3 ? "hosted" : "endpoint",
              emailsToNotify: ["team@acme.test"],
            };
            return { ...req, path: FORMS_PATH, body: JSON.stringify(body) };
          },
        },
      ];
    case "update":
      return [
        {
          method: "PATCH",
          headers: withBody,
          setupRequest: (req) => {
            sent += 1;
            const body = { name: `Renamed form ${sent}`, sendEmailNotifications: sent % 2 === 0 };
            const path = `${FORMS_PATH}/${nextId(request.formIds)}`;
            return { ...req, path, body: JSON.stringify(body) };
          },
        },
      ];
  }
}

// Consecutive requests take consecutive ids, so the requests in flight (one per connection)
// never wait on each other's row lock while the list is longer than the connection count.
let position = 0;
function nextId(formIds: string[]): string {
  position = (position + 1) % formIds.length;
  return formIds[position] as string;
}

/** The value below which a share `q` of the sorted values lie (nearest rank). */
const percentile = (sorted: Float64Array, q: number) =>
  sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0;
const toHundredths = (ms: number) => Math.round(ms * 100) / 100;

const spec = JSON.parse(await text(process.stdin)) as LoadSpec;
const instance = autocannon({
  url: spec.origin,
  connections: spec.connections,
  duration: spec.durationSeconds,
  warmup: { connections: spec.connections, duration: spec.warmupSeconds },
  headers: spec.headers,
  requests: requestsFor(spec.request, spec.headers),
});
// Autocannon's own histogram counts whole milliseconds, too coarse for a fast server or a single
// client; each response's time is measured to the microsecond, so percentiles come from those.
// Only the counted run's responses arrive here: the warm-up reports to another emitter.
const latencies: number[] = [];
instance.on("response", (_client, _status, _bytes, milliseconds) => latencies.push(milliseconds));
const result = await instance;
const sorted = Float64Array.from(latencies).sort();

const summary: LoadSummary = {
  requestsPerSecond: Math.round(result.requests.total / result.duration),
  latencyMs:
    latencies.length === 0
      ? null
      : {
          mean: toHundredths(latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length),
          p50: toHundredths(percentile(sorted, 0.5)),
          p99: toHundredths(percentile(sorted, 0.99)),
        },
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]),
  ),
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
// The IPC channel (see servers/exit-with-parent.ts) would otherwise keep the process alive.
process.exit(0);
