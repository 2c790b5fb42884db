// The load generator, run as its own process so that it does not share an event loop (or a
// core's worth of CPU accounting) with the bench or the server it measures.
import { randomUUID } from "node:crypto";
import { text } from "node:stream/consumers";
import autocannon, { type Request } from "autocannon";
import {
  FORMS_PATH,
  intakeBody,
  type LoadRequest,
  type LoadSpec,
  type LoadSummary,
  type UpdateBody,
} from "./load-spec.ts";

/** The body of the `sent`-th update: see UpdateBody. */
function updateBody(body: UpdateBody, sent: number): object {
  switch (body) {
    case "rename":
      return { name: `Renamed form ${sent}`, sendEmailNotifications: sent % 2 === 0 };
    case "close":
      return { isClosed: sent % 2 === 0 };
    case "auto-close": {
      // A deadline that changes every time (a day of 2099), so that every update re-arms it.
      const day = new Date(Date.UTC(2099, 0, 1 + (sent % 365))).toISOString().slice(0, 10);
      return {
        autoCloseEnabled: true,
        autoCloseDate: day,
        autoCloseTime: "18:00",
        autoCloseTimezone: "Europe/Berlin",
      };
    }
    case "rename or close":
      return updateBody(sent % 2 === 0 ? "rename" : "close", sent);
  }
}

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
            const reqHeaders = request.idempotent
              ? { ...req.headers, "idempotency-key": randomUUID() }
              : req.headers;
            return { ...req, headers: reqHeaders, path: FORMS_PATH, body: JSON.stringify(body) };
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
            const path = `${FORMS_PATH}/${nextId(request.formIds)}`;
            return { ...req, path, body: JSON.stringify(updateBody(request.body, sent)) };
          },
        },
      ];
    case "intake":
      return [
        {
          method: "POST",
          headers: {
            ...headers,
            accept: "application/json",
            "content-type": "application/x-www-form-urlencoded",
          },
          setupRequest: (req) => {
            sent += 1;
            const path = `/f/${nextId(request.formIds)}`;
            return { ...req, path, body: intakeBody(sent) };
          },
        },
      ];
  }
}

/** The requests, each sending the next of `apiKeys` as its key when there are any. */
function withRotatingKeys(requests: Request[], apiKeys: string[] | undefined): Request[] {
  if (!apiKeys || apiKeys.length === 0) return requests;
  let next = 0;
  return requests.map(({ setupRequest, ...request }) => ({
    ...request,
    setupRequest: (req, context) => {
      const built = setupRequest ? setupRequest(req, context) : req;
      next = (next + 1) % apiKeys.length;
      return { ...built, headers: { ...built.headers, "api-key": apiKeys[next] as string } };
    },
  }));
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
  requests: withRotatingKeys(requestsFor(spec.request, spec.headers), spec.apiKeys),
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
