import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { after, before, test } from "node:test";
import { type PacedReader, UploadPace, type UploadTurn } from "../../src/files/upload-pace.ts";
import { drainRequest } from "../../src/intake/lingering-close.ts";
import { spareCapacity } from "../../src/jobs/spare-capacity.ts";
import { sleep } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm } from "../intake/intake-fixtures.ts";
import { MULTIPART_TYPE, multipartBytes, storedFiles } from "./files-fixtures.ts";

test("uploads alone are never paced, however much they read", () => {
  const pace = new UploadPace(1_000_000, () => 2);
  const uploads = [pace.countUpload(), pace.countUpload()];
  for (let read = 0; read < 10; read++) {
    for (const upload of uploads) assert.equal(pace.delayAfter(1_000_000, upload), 0);
  }
  for (const upload of uploads) upload.done();
});

test("beside another request, reading past a tenth of a second's bytes waits for the rate", () => {
  const pace = new UploadPace(1_000_000, () => 2);
  const upload = pace.countUpload();
  // The allowance: 100,000 bytes read at once.
  assert.equal(pace.delayAfter(100_000, upload), 0);
  // 200,000 bytes past it take 200 ms at 1 MB a second (less what the microseconds refilled).
  const delay = pace.delayAfter(200_000, upload);
  assert.ok(delay > 190 && delay <= 200, `delay ${delay}`);
  upload.done();
});

test("a rate of 0 never paces", () => {
  const pace = new UploadPace(0, () => 5);
  assert.equal(pace.delayAfter(1_000_000_000, pace.drainReader()), 0);
});

test("uploads stay paced for a second after the last other request, then read freely", async () => {
  let inFlight = 2;
  const pace = new UploadPace(1_000_000, () => inFlight);
  const upload = pace.countUpload();
  pace.delayAfter(100_000, upload);
  inFlight = 1; // the other request answered: only the upload is left
  assert.ok(pace.delayAfter(100_000, upload) > 0, "paced right after the other request ended");
  await sleep(1_100);
  assert.equal(pace.delayAfter(1_000_000, upload), 0);
  // Nothing owed from the megabyte read freely: the next busy spell waits only for its own bytes.
  inFlight = 2;
  const delay = pace.delayAfter(50_000, upload);
  assert.ok(delay > 0 && delay <= 50, `delay ${delay}`);
  upload.done();
});

/** Calls `resume` of a reader's wait; resolves to the milliseconds it waited. */
function waited(start: (resume: () => void) => (() => void) | null) {
  const started = performance.now();
  return new Promise<number>((resolve) => {
    if (!start(() => resolve(performance.now() - started))) resolve(0);
  });
}

/** Reads `chunk` bytes at a time as fast as `reader`'s waits let it, until the returned call. */
function keepReading(reader: PacedReader, chunk: number) {
  let stopped = false;
  let read = 0;
  const next = () => {
    if (stopped) return;
    read += chunk;
    if (!reader.waitAfter(chunk, next)) setImmediate(next);
  };
  next();
  return () => {
    stopped = true;
    return read;
  };
}

test("while paced, the first upload reads at the rate and the next waits until its body is read", async () => {
  const pace = new UploadPace(1_000_000, () => 3);
  const first = pace.countUpload();
  const second = pace.countUpload();
  assert.equal(
    first.waitAfter(50_000, () => {}),
    null,
  );
  // The second has read a chunk: it waits, however much allowance is left, while the first reads.
  const secondWait = waited((resume) => second.waitAfter(10_000, resume));
  const stopReading = keepReading(first, 30_000);
  await sleep(400);
  const firstRead = stopReading();
  first.bodyRead();
  const secondWaited = await secondWait;
  assert.ok(firstRead >= 300_000, `the first read ${firstRead} bytes`);
  // Its turn came once the first's body was read; it now reads at the rate, 50 kB in 50 ms.
  assert.ok(secondWaited >= 400 && secondWaited < 700, `the second waited ${secondWaited} ms`);
  const delay = pace.delayAfter(50_000, second);
  assert.ok(delay > 0 && delay < 100, `then waits ${delay} ms for 50 kB`);
  first.done();
  second.done();
});

test("a reader whose turn has not come reads what the first leaves when it does not read", async () => {
  const pace = new UploadPace(1_000_000, () => 3);
  const first = pace.countUpload();
  const drain = pace.drainReader();
  first.waitAfter(100_000, () => {});
  // The first upload reads nothing more (its client is slow): the allowance refills in 100 ms.
  const drained = await waited((resume) => drain.waitAfter(10_000, resume));
  assert.ok(drained >= 90 && drained < 300, `the drain waited ${drained} ms`);
  first.done();
});

/**
 * The milliseconds each drained body waits, shortest first, to read 10 kB while `upload` keeps
 * reading at the rate.
 */
async function drainWaitsBeside(upload: UploadTurn, drains: PacedReader[]) {
  assert.equal(
    upload.waitAfter(60_000, () => {}),
    null,
  );
  const waits = drains.map((drain) => waited((resume) => drain.waitAfter(10_000, resume)));
  const stopReading = keepReading(upload, 30_000);
  const sorted = (await Promise.all(waits)).toSorted((a, b) => a - b);
  stopReading();
  upload.done();
  return sorted;
}

test("a body drained after its answer reads after the uploads, a chunk a second while they read", async () => {
  const pace = new UploadPace(1_000_000, () => 3);
  // Drained before the upload started: it still comes after it.
  const drain = pace.drainReader();
  const [drained] = await drainWaitsBeside(pace.countUpload(), [drain]);
  assert.ok(drained !== undefined && drained >= 950 && drained < 1_300, `waited ${drained} ms`);
});

test("the drained bodies together read a chunk a second while the uploads read", async () => {
  const pace = new UploadPace(1_000_000, () => 3);
  const upload = pace.countUpload();
  const [first, second] = await drainWaitsBeside(upload, [pace.drainReader(), pace.drainReader()]);
  assert.ok(first !== undefined && first >= 950 && first < 1_300, `one waited ${first} ms`);
  assert.ok(second !== undefined && second >= 1_950 && second < 2_400, `the other ${second} ms`);
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

/** Posts a file of `bytes` (3 MB) to the form; the milliseconds until its 201. */
async function timedUpload(formId: string, bytes = 3_000_000) {
  const body = multipartBytes([
    { name: "doc", file: { name: "notes.txt", content: Buffer.alloc(bytes, "a") } },
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

/** Runs `during` while a request is in flight: its head sent (its key valid), its body not yet. */
async function besideAnotherRequest<T>(key: string, during: () => Promise<T>): Promise<T> {
  const other = net.connect(port, "127.0.0.1");
  other.on("error", () => {});
  other.write(
    `POST /api/v1/forms HTTP/1.1\r\nHost: 127.0.0.1\r\nAPI-Key: ${key}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 20\r\n\r\n",
  );
  try {
    await sleep(100);
    return await during();
  } finally {
    other.destroy();
  }
}

test("UPLOAD_RATE_WHILE_BUSY: an upload is read at the rate while another request is in flight, at full speed once none is", async () => {
  const form = await newForm(built.app);
  const alone = await timedUpload(form.id);
  assert.ok(alone < 2_000, `alone: ${alone} ms`);

  const beside = await besideAnotherRequest(form.key, () => timedUpload(form.id));
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

test("paced uploads finish one after another: the one that started first is read first", async () => {
  const form = await newForm(built.app);
  const [first, second] = await besideAnotherRequest(form.key, async () => {
    const first = timedUpload(form.id, 1_200_000);
    await sleep(50);
    return Promise.all([first, timedUpload(form.id, 1_200_000)]);
  });
  // 2.4 MB at 1 MB a second: the first answered after its own 1.2 MB, the second after both.
  assert.ok(first !== undefined && second !== undefined);
  assert.ok(first < 1_700, `the first: ${first} ms`);
  assert.ok(second - first > 700, `the second: ${second} ms, the first ${first} ms`);
  const files = await storedFiles(built.db, form.id);
  assert.deepEqual(
    files.map((file) => file.size),
    [1_200_000, 1_200_000],
  );
});
