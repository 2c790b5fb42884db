import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { type RunningServer, startServer, tempDataDir } from "./server-process.ts";

let server: RunningServer;

before(async () => {
  server = await startServer({
    DATA_DIR: await tempDataDir(),
    REQUEST_TIMEOUT_SECONDS: "1",
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
  });
});
after(() => server.stop());

/** Sends `head`, a blank line and `bodyPart`; resolves what the server wrote, once it closes. */
function sendUnfinished(head: string, bodyPart: string) {
  const { port } = new URL(server.url);
  const socket = connect(Number(port), "127.0.0.1");
  socket.write(bodyPart === "" ? head : `${head}\r\n\r\n${bodyPart}`);
  const started = performance.now();
  return new Promise<{ text: string; seconds: number }>((resolve, reject) => {
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ text, seconds: (performance.now() - started) / 1000 }));
  });
}

const post = (headers: string) =>
  `POST /api/v1/forms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100${headers}`;

test("a request whose headers never finish is answered 408 and disconnected", async () => {
  const { text, seconds } = await sendUnfinished("GET /api/v1/forms HTTP/1.1\r\nHost: x", "");
  assert.ok(seconds < 5, `closed after ${seconds} s`);
  assert.match(text, /^HTTP\/1\.1 408 /);
  assert.ok(
    text.endsWith(
      JSON.stringify({
        error: { code: "request_timeout", message: "request: was not received in time" },
      }),
    ),
    text,
  );
});

test("a request answered before its body arrived is closed without a second answer", async () => {
  // No key: answered 401 at once, while 92 bytes of its body are still to come.
  const { text, seconds } = await sendUnfinished(post(""), '{"name":');
  assert.ok(seconds < 5, `closed after ${seconds} s`);
  assert.match(text, /^HTTP\/1\.1 401 /);
  assert.equal(text.match(/HTTP\/1\.1/g)?.length, 1, text);
});
