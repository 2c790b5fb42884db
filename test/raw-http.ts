import http from "node:http";
import net from "node:net";

export interface RawAnswer {
  /** Everything the server wrote, until it closed the connection. */
  text: string;
  /** The first answer's status, headers (lower case) and body. */
  status: number;
  headers: string;
  body: string;
  /** From sending to the close. */
  seconds: number;
}

/**
 * Sends `bytes` as they are, for requests no HTTP client would write, and resolves what came
 * back once the server closes. `finished: false` keeps the sending side open, as a client that
 * stalls mid-request would.
 */
export function sendRaw(port: number, bytes: string, { finished = true } = {}) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const started = performance.now();
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      const seconds = (performance.now() - started) / 1000;
      resolve({
        text,
        status: Number(head.split(" ")[1]),
        headers: head.toLowerCase(),
        body,
        seconds,
      });
    });
    if (finished) socket.end(bytes);
    else socket.write(bytes);
  });
}

/** An answer to requestOverHttp: its status, headers and body as text. */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * A request through Node's own client on a real connection, for what fetch will not send (a body
 * on a GET or a DELETE, a body with no Content-Type): `body` goes as it is, its length in
 * `Content-Length` (Node's client would send a DELETE's without one).
 */
export function requestOverHttp(
  port: number,
  method: string,
  path: string,
  headers: http.OutgoingHttpHeaders,
  body?: string | Buffer,
) {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const length = body !== undefined && { "content-length": Buffer.byteLength(body) };
    const options = { port, host: "127.0.0.1", method, path, headers: { ...length, ...headers } };
    const request = http.request(options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => {
        text += chunk;
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
      );
    });
    request.on("error", reject);
    request.end(body);
  });
}
