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
