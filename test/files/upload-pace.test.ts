import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { after, before, test } from "node:test";
import { UploadPace } from "../../src/files/upload-pace.ts";
import { drainRequest } from "../../src/intake/lingering-close.ts";
import { spareCapacity } from "../../src/jobs/spare-capacity.ts";
import { sleep } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm } from "../intake/intake-fixtures.ts";
import { MULTIPART_TYPE, multipartBytes, storedFiles } from "./files-fixtures.ts";

test("uploads alone are never paced, however much they read", () => {
  const pace = new UploadPace(1_000_000, () => 2);
  const stop = [pace.countUpload(), pace.countUpload()];
  for (let read = 0; read < 10; read++) assert.equal(pace.delayAfter(1_000_000), 0);
  for (const done of stop) done();
});

test("beside another request, reading past a tenth of a second's bytes waits for the rate", () => {
  const pace = new UploadPace(1_000_000, () => 2);
  const done = pace.countUpload();
  // The allowance: 100,000 bytes read at once.
  assert.equal(pace.delayAfter(100_000), 0);
  // 200,000 bytes past it take 200 ms at 1 MB a second (less what the microseconds refilled).
  const delay = pace.delayAfter(200_000);
  assert.ok(delay > 190 && delay <= 200, `delay ${delay}`);
  done();
});

test("a rate of 0 never paces", () => {
  const pace = new UploadPace(0, () => 5);
  assert.equal(pace.delayAfter(1_000_000_000), 0);
});

test("uploads stay paced for a second after the last other request, then read freely", async () => {
  let inFlight = 2;
  const pace = new UploadPace(1_000_000, () => inFlight);
  const done = pace.countUpload();
  pace.delayAfter(100_000);
  inFlight = 1; // the other request answered: only the upload is left
  assert.ok(pace.delayAfter(100_000) > 0, "paced right after the other request ended");
  await sleep(1_100);
  assert.equal(pace.delayAfter(1_000_000), 0);
  // Nothing owed from the megabyte read freely: the next busy spell waits only for its own bytes.
  inFlight = 2;
  const delay = pace.delayAfter(50_000);
  assert.ok(delay > 0 && delay <= 50, `delay ${delay}`);
  done();
});

test("a drained body paced past its time bound is still read to its end: the bound is the client's", async () => {
  // 300 kB at 200 kB a second take 1.5 s; the bound is 300 ms.
  const pace = new UploadPace(200_000, () => 1);
  const drained = new Promise<boolean>((resolve) => {
    const server = createServer((request: IncomingMessage, response) => {
      response.end("early");
      void drainRequest(request, { maxBytes: 1_000_000, maxMs: 300, pace }).then((done) => {
        server.close();
        resolve(done);
      });
    });
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n`);
        socket.end(Buffer.alloc(300_000, "a"));
      });
      socket.on("error", () => {});
      socket.resume();
    });
  });
  const started = performance.now();
  assert.equal(await drained, true);
  assert.ok(performance.now() - started >= 1_000, "the drain was paced");
});

let built: Awaited<ReturnType<typeof buildTestApp>>;
let port: number;
const capacity = spareCapacity();

before(async () => {
  built = await buildTestApp({ uploadRateWhileBusy: 1_000_000 }, { capacity });
  // As server.ts counts the requests in flight.
  built.app.server.on("request", (_request, response) => capacity.track(response));
  await built.app.listen({ port: 0, host: "127.0.0.1" });
  port = (built.app.server.address() as AddressInfo).port;
});

after(async () => {
  capacity.stop();
  await built.close();
  await closeTestDatabase();
});

/** Posts a 3 MB file to the form; the milliseconds until its 201. */
async function timedUpload(formId: string) {
  const body = multipartBytes([
    { name: "doc", file: { name: "notes.txt", content: Buffer.alloc(3_000_000, "a") } },
  ]);
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/f/${formId}`, {
    method: "POST",
    headers: { "content-type": MULTIPART_TYPE, accept: "application/json" },
    body,
  });
  assert.equal(response.status, 201, await response.text());
  return performance.now() - started;
}

test("UPLOAD_RATE_WHILE_BUSY: an upload is read at the rate while another request is in flight, at full speed once none is", async () => {
  const form = await newForm(built.app);
  const alone = await timedUpload(form.id);
  assert.ok(alone < 2_000, `alone: ${alone} ms`);

  // A request in flight: its head sent (its key valid), its body not yet.
  const other = net.connect(port, "127.0.0.1");
  other.on("error", () => {});
  other.write(
    `POST /api/v1/forms HTTP/1.1\r\nHost: 127.0.0.1\r\nAPI-Key: ${form.key}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 20\r\n\r\n",
  );
  let beside: number;
  try {
    await sleep(100);
    beside = await timedUpload(form.id);
  } finally {
    other.destroy();
  }
  // 3 MB at 1 MB a second, less the allowance of 100 kB: at least 2.8 s.
  assert.ok(beside >= 2_700, `beside another request: ${beside} ms`);

  await sleep(1_200);
  const afterwards = await timedUpload(form.id);
  assert.ok(afterwards < 2_000, `afterwards: ${afterwards} ms`);
  const files = await storedFiles(built.db, form.id);
  assert.deepEqual(
    files.map((file) => file.size),
    [3_000_000, 3_000_000, 3_000_000],
  );
});
