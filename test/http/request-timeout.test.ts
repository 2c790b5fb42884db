import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sendRaw } from "../raw-http.ts";
import { type RunningServer, startServer, tempDataDir } from "../server/server-process.ts";

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

/** Sends `head`, a blank line and `bodyPart` (only `head` when there is no body part). */
function sendUnfinished(head: string, bodyPart: string) {
  const bytes = bodyPart === "" ? head : `${head}\r\n\r\n${bodyPart}`;
  return sendRaw(Number(new URL(server.url).port), bytes, { finished: false });
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
