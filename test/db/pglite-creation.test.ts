import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { access, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { openDatabase } from "../../src/db/database.ts";
import { tempDataDir } from "../server/server-process.ts";

const run = promisify(execFile);

/** Peak RSS in MB of a process that opens the store in `dataDir`, as a server does. */
async function peakOfOpening(dataDir: string) {
  const { stdout } = await run(process.execPath, [
    "--liftoff-only",
    path.join(import.meta.dirname, "open-store-peak.ts"),
    dataDir,
  ]);
  return Number(stdout);
}

test("a new embedded store is created by a process of its own: the process that opens it holds no more memory than one opening an existing store", async () => {
  const dataDir = await tempDataDir();
  try {
    const creating = await peakOfOpening(dataDir);
    await access(path.join(dataDir, "PG_VERSION"));
    const reopening = await peakOfOpening(dataDir);
    // PGlite's initdb, run in the opening process, took it about 300 MB past a reopening.
    assert.ok(
      creating < reopening + 100,
      `opening a new store peaked at ${creating} MB, reopening it at ${reopening} MB`,
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("a new embedded store that cannot be created: the error names the directory and the cause", async () => {
  const dir = await tempDataDir();
  // A file where the store's directory should be.
  const dataDir = path.join(dir, "store");
  try {
    await writeFile(dataDir, "not a directory");
    await assert.rejects(openDatabase({ databaseUrl: null, dataDir }), (error: Error) => {
      assert.match(
        error.message,
        new RegExp(
          `^the embedded store in ${dataDir} could not be created \\(exit code 1\\): .*ENOTDIR`,
        ),
      );
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a creation cut off midway leaves no store: the next start creates it again over what it left", async () => {
  const dataDir = await tempDataDir();
  try {
    // What a creation killed while it moved the cluster in leaves: its staging directory, and
    // some of the cluster's entries, PG_VERSION not yet among them.
    await mkdir(path.join(dataDir, ".formdeck-creating", "base"), { recursive: true });
    await writeFile(path.join(dataDir, "base"), "a part of a cluster");
    await mkdir(path.join(dataDir, "global"));
    await writeFile(path.join(dataDir, "formdeck.lock"), "not the cluster's");
    const db = await openDatabase({ databaseUrl: null, dataDir });
    try {
      assert.deepEqual(await db.query("SELECT 1 AS one"), [{ one: 1 }]);
    } finally {
      await db.close();
    }
    const entries = await readdir(dataDir);
    assert.ok(entries.includes("PG_VERSION"));
    assert.ok(!entries.includes(".formdeck-creating"), entries.join(", "));
    assert.equal(await readFile(path.join(dataDir, "formdeck.lock"), "utf8"), "not the cluster's");
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
