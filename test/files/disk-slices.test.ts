import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { diskSlices } from "../../src/files/disk-slices.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "formdeck-disk-slices-"));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Bytes that differ along their length, so that slices out of order would show. */
const contentOf = (bytes: number) =>
  Buffer.from(Array.from({ length: bytes }, (_, at) => (at * 7) % 251));

async function fileOf(name: string, bytes: number) {
  const file = path.join(dir, name);
  await writeFile(file, contentOf(bytes));
  return file;
}

const openFiles = () => readdirSync("/proc/self/fd").length;

test("a file is read in order, in slices of at most the size asked, all into one buffer", async () => {
  const file = await fileOf("two-and-a-half", 2_500);
  const copies: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const slice of diskSlices(file, 1_000)) {
    copies.push(Buffer.from(slice));
    buffers.add(slice.buffer);
  }
  assert.deepEqual(
    copies.map((copy) => copy.length),
    [1_000, 1_000, 500],
  );
  assert.deepEqual(Buffer.concat(copies), contentOf(2_500));
  assert.equal(buffers.size, 1, "every slice is read into the same buffer");
});

test("an empty file has no slices", async () => {
  const slices = [];
  for await (const slice of diskSlices(await fileOf("empty", 0), 1_000)) slices.push(slice);
  assert.deepEqual(slices, []);
});

test("the file is closed when its reader stops early, and when it ends", async () => {
  const file = await fileOf("closed", 3_000);
  const before = openFiles();
  for await (const slice of diskSlices(file, 1_000)) {
    assert.equal(slice.length, 1_000);
    assert.equal(openFiles(), before + 1, "the file is open while it is read");
    break;
  }
  assert.equal(openFiles(), before);
  for await (const _slice of diskSlices(file, 1_000));
  assert.equal(openFiles(), before);
});
