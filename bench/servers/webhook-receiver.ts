// The notifications bench's webhook receiver: what a receiver on the operator's own network
// does at its fastest. Every POST is answered 204 at once; its event's submission id and the
// instant it arrived are kept, for the bench to read (GET /arrivals) and clear (DELETE
// /arrivals). Instants are wall-clock milliseconds with microseconds (performance.timeOrigin +
// performance.now()), the clock the bench's intake client reads too: both run on this machine.
import http from "node:http";
import { listenAddress } from "./server-env.ts";

/** Per arrival: the submission id and when the request's body had arrived. */
let arrivals: [string, number][] = [];
let withoutId = 0;

const now = () => performance.timeOrigin + performance.now();

function answer(response: http.ServerResponse, status: number, body?: unknown) {
  const json = body === undefined ? "" : JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json" }).end(json);
}

const server = http.createServer((request, response) => {
  if (request.method === "GET" && request.url === "/arrivals") {
    return answer(response, 200, { arrivals, withoutId });
  }
  if (request.method === "DELETE" && request.url === "/arrivals") {
    arrivals = [];
    withoutId = 0;
    return answer(response, 204);
  }
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const at = now();
    try {
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        data?: { submission?: { id?: string } };
      };
      const id = event.data?.submission?.id;
      if (id && request.headers["webhook-id"]) arrivals.push([id, at]);
      else withoutId++;
    } catch {
      withoutId++;
    }
    response.writeHead(204).end();
  });
});
// Formdeck keeps its connections to a receiver open between deliveries, as most do.
server.keepAliveTimeout = 60_000;
const { port, host } = listenAddress();
server.listen(port, host);
