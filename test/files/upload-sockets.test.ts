import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { tmpdir } from "node:os";
import { after, before, test } from "node:test";
import { BODY_BYTES_PER_COLLECTION, bodyGarbage } from "../../src/files/body-garbage.ts";
import { sleep } from "../forms/form-fixtures.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { newForm, storedSubmissions } from "../intake/intake-fixtures.ts";
import { BOUNDARY, image, MULTIPART_TYPE, multipartBytes, storedFiles } from "./files-fixtures.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;
let port: number;

before(async () => {
  built = await buildTestApp({
    uploadMaxFileBytes: 10_485_760,
    uploadMaxInFlightBytes: 12_000_000,
    intakeRateLimitMax: 1_000,
  });
  await built.app.listen({ port: 0, host: "127.0.0.1" });
  port = (built.app.server.address() as AddressInfo).port;
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

const head = (formId: string, length: number) =>
  `POST /f/${formId} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MULTIPART_TYPE}\r\n` +
  `Content-Length: ${length}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`;

interface Exchange {
  /** What the server answered, read while the body was still being sent. */
  answer: string;
  /** How the connection ended for the client: "closed" or the socket error's code. */
  ending: string;
  socket: net.Socket;
}

/**
 * Sends `body` in 64 kB writes, as fast as the server takes them, and reads the answer once it
 * has sent it all, as a browser submitting a form does; `stopAfter` bytes: stops sending there
 * and leaves the connection open (reading).
 */
function send(formId: string, body: Buffer, stopAfter = body.length): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    const done = (ending: string) => resolve({ answer, ending, socket });
    socket.on("error", (error: NodeJS.ErrnoException) => done(error.code ?? "error"));
    socket.on("close", () => done("closed"));
    socket.pause();
    socket.on("connect", async () => {
      socket.write(head(formId, body.length));
      for (let at = 0; at < stopAfter && !socket.destroyed; at += 65_536) {
        const piece = body.subarray(at, Math.min(at + 65_536, stopAfter));
        if (!socket.write(piece)) {
          await new Promise((drained) => {
            socket.once("drain", drained);
            socket.once("close", drained);
          });
        }
      }
      socket.resume();
      if (stopAfter < body.length) resolve({ answer, ending: "open", socket });
    });
  });
}

const statusOf = (answer: string) => Number(answer.split(" ")[1]);
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

test("an early answer reaches a client still uploading 20 MB: closed form, file too large", async () => {
  const closed = await newForm(built.app, { isClosed: true });
  const open = await newForm(built.app);
  const big = multipartBytes([
    { name: "doc", file: { name: "big.txt", content: Buffer.alloc(20_000_000, "a") } },
  ]);
  const refusedClosed = await send(closed.id, big);
  assert.equal(statusOf(refusedClosed.answer), 403, refusedClosed.ending);
  assert.deepEqual(bodyOf(refusedClosed.answer), {
    error: { code: "form_closed", message: "form: is closed" },
  });
  const refusedLarge = await send(open.id, big);
  assert.equal(statusOf(refusedLarge.answer), 413, refusedLarge.ending);
  assert.deepEqual(bodyOf(refusedLarge.answer), {
    error: { code: "payload_too_large", message: "doc: a file may be at most 10485760 bytes" },
  });
  assert.deepEqual(await storedSubmissions(built.db, open.id), []);
});

/** Waits up to `ms` for `ready` to hold, checking every 20 ms; whether it did. */
async function within(ms: number, ready: () => boolean) {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(20)) {
    if (ready()) return true;
  }
  return ready();
}

test("bodies read, drained or stored, are followed by collections of the young generation", async () => {
  const closed = await newForm(built.app, { isClosed: true });
  const open = await newForm(built.app);
  const drained = multipartBytes([
    {
      name: "doc",
      file: { name: "big.txt", content: Buffer.alloc(BODY_BYTES_PER_COLLECTION, "a") },
    },
  ]);
  const before = bodyGarbage.collections;
  const refused = await send(closed.id, drained);
  assert.equal(statusOf(refused.answer), 403, refused.ending);
  // The answer may come before the last of the body is read.
  assert.ok(await within(5_000, () => bodyGarbage.collections >= before + 1), "drained: counted");
  const stored = multipartBytes([
    { name: "doc", file: { name: "big.txt", content: Buffer.alloc(9_000_000, "a") } },
  ]);
  const afterDrain = bodyGarbage.collections;
  for (const _ of [1, 2]) {
    const accepted = await send(open.id, stored);
    assert.equal(statusOf(accepted.answer), 201, accepted.answer);
  }
  assert.ok(bodyGarbage.collections >= afterDrain + 1, "stored: counted");
  assert.equal((await storedSubmissions(built.db, open.id)).length, 2);
});

test("an early answer goes out at once, while the body is still read; once read, the connection serves the next request", async () => {
  const closed = await newForm(built.app, { isClosed: true });
  const big = multipartBytes([
    { name: "doc", file: { name: "big.txt", content: Buffer.alloc(20_000_000, "a") } },
  ]);
  const small = multipartBytes([{ name: "a", value: "1" }]);
  const request = (body: Buffer) =>
    `POST /f/${closed.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MULTIPART_TYPE}\r\n` +
    `Content-Length: ${body.length}\r\nAccept: application/json\r\n\r\n`;
  const socket = net.connect(port, "127.0.0.1");
  let received = "";
  socket.setEncoding("latin1").on("data", (chunk: string) => {
    received += chunk;
  });
  const answers = () => received.split("form: is closed").length - 1;
  try {
    await new Promise((connected) => socket.once("connect", connected));
    socket.write(request(big));
    socket.write(big.subarray(0, 1_000_000));
    // A client that reads while it sends (fetch, curl) gets the answer now and may stop; the
    // answer used to wait for the other 19 MB.
    assert.ok(await within(5_000, () => answers() === 1), received);
    assert.equal(statusOf(received), 403);
    assert.doesNotMatch(received, /connection: close/i);
    socket.write(big.subarray(1_000_000));
    socket.write(request(small) + small.toString("latin1"));
    assert.ok(await within(5_000, () => answers() === 2), received);
    assert.equal(socket.destroyed, false);
  } finally {
    socket.destroy();
  }
});

test("a body that stops mid-file stores nothing, and the server goes on", async () => {
  const form = await newForm(built.app);
  const body = multipartBytes([
    { name: "a", value: "1" },
    { name: "doc", file: { name: "a.txt", content: Buffer.alloc(2_000_000, "a") } },
  ]);
  const stalled = await send(form.id, body, 1_000_000);
  await sleep(200);
  stalled.socket.destroy();
  await sleep(200);
  assert.deepEqual(await storedSubmissions(built.db, form.id), []);
  const next = await send(form.id, multipartBytes([{ name: "a", value: "1" }]));
  assert.equal(statusOf(next.answer), 201, next.answer);
});

test("past UPLOAD_MAX_IN_FLIGHT_BYTES: 503 with Retry-After; the upload holding it succeeds", async () => {
  const form = await newForm(built.app);
  const file = (bytes: number) =>
    multipartBytes([{ name: "doc", file: { name: "a.txt", content: Buffer.alloc(bytes, "a") } }]);
  const holding = file(10_000_000);
  // Sent in part: it has reserved what its file may take, and holds it while it waits.
  const first = await send(form.id, holding, 200_000);
  await sleep(300);
  const second = await send(form.id, file(3_000_000));
  assert.equal(statusOf(second.answer), 503, second.answer);
  assert.match(second.answer.toLowerCase(), /\r\nretry-after: 5\r\n/);
  assert.deepEqual(bodyOf(second.answer), {
    error: {
      code: "service_unavailable",
      message: "uploads: the server is receiving too many files; retry shortly",
    },
  });
  const finishing = new Promise<string>((resolve) => {
    let answer = "";
    first.socket.on("data", (chunk: string) => {
      answer += chunk;
      if (answer.includes("}")) resolve(answer);
    });
  });
  first.socket.write(holding.subarray(200_000));
  const answer = await finishing;
  assert.equal(statusOf(answer), 201, answer);
  first.socket.destroy();
  assert.equal((await storedFiles(built.db, form.id)).length, 1);
});

test("concurrent uploads with compression: every one stored, other requests answered", async () => {
  const form = await newForm(built.app, { imageCompressionType: ["png"] });
  const png = await image("png", 600, 400);
  const body = multipartBytes([{ name: "pic", file: { name: "p.png", content: png } }]);
  const uploads = Array.from({ length: 12 }, () =>
    fetch(`http://127.0.0.1:${port}/f/${form.id}`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body,
    }),
  );
  const list = await fetch(`http://127.0.0.1:${port}/api/v1/forms`, {
    headers: { "api-key": form.key },
  });
  assert.equal(list.status, 200);
  const statuses = await Promise.all(uploads.map(async (res) => (await res).status));
  assert.deepEqual(statuses, Array(12).fill(201));
  const stored = await storedFiles(built.db, form.id);
  assert.equal(stored.length, 12);
  assert.ok(stored.every((file) => file.type === "image/png"));
});

test("20 concurrent 10 MB uploads: each stored or refused 503, the server answering throughout", async () => {
  const form = await newForm(built.app);
  const body = multipartBytes([
    { name: "doc", file: { name: "big.txt", content: Buffer.alloc(10_000_000, "a") } },
  ]);
  const uploads = Array.from({ length: 20 }, () =>
    fetch(`http://127.0.0.1:${port}/f/${form.id}`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body,
    }).then(async (res) => ({ status: res.status, body: await res.json() })),
  );
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  assert.equal(health.status, 200);
  const answers = await Promise.all(uploads);
  const stored = answers.filter((answer) => answer.status === 201);
  assert.ok(stored.length >= 1, "uploads within the budget are stored");
  for (const answer of answers.filter((answer) => answer.status !== 201)) {
    assert.deepEqual(answer, {
      status: 503,
      body: {
        error: {
          code: "service_unavailable",
          message: "uploads: the server is receiving too many files; retry shortly",
        },
      },
    });
  }
  const files = await storedFiles(built.db, form.id);
  assert.equal(files.length, stored.length);
  assert.ok(files.every((file) => file.size === 10_000_000));
});

/** This process's open files in upload directories (Linux: /proc/self/fd). */
function openUploadFiles(): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).includes("formdeck-upload-");
    } catch {
      return false;
    }
  }).length;
}

test("bodies that stop mid-file leave no file open and none on disk", {
  skip: process.platform !== "linux" && "reads /proc/self/fd",
}, async () => {
  const form = await newForm(built.app);
  // Directories an earlier process left (a server killed mid-upload) are not this test's.
  const uploadDirs = () =>
    readdirSync(tmpdir()).filter((name) => name.startsWith("formdeck-upload-"));
  const earlier = new Set(uploadDirs());
  const body = multipartBytes([
    { name: "doc", file: { name: "a.txt", content: Buffer.alloc(2_000_000, "a") } },
  ]);
  for (let i = 0; i < 3; i++) {
    const stalled = await send(form.id, body, 1_000_000);
    await sleep(200);
    assert.equal(openUploadFiles(), 1, "the file being written is open");
    stalled.socket.destroy();
  }
  // Each request's file closes, then its directory is removed, as its refusal unwinds.
  const newDirs = () => uploadDirs().filter((name) => !earlier.has(name));
  for (let wait = 0; wait < 100 && (openUploadFiles() > 0 || newDirs().length > 0); wait++) {
    await sleep(20);
  }
  assert.equal(openUploadFiles(), 0);
  assert.deepEqual(newDirs(), []);
});
