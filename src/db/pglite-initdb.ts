// Creates a new embedded store in the directory named by its one argument, then exits: run by
// pglite-store.ts in a process of its own (see createPgliteStore there).
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLITE_OPTIONS } from "./pglite-options.ts";

const dataDir = process.argv[2];
if (!dataDir) throw new Error("usage: node src/db/pglite-initdb.ts <data directory>");

// The cluster is made beside the directory's other files, then moved in, PG_VERSION last: a
// directory is a store once PG_VERSION is there, so a creation cut off at any point leaves none,
// and the next start makes it again, replacing what the cut-off one had moved.
try {
  const staging = path.join(dataDir, ".formdeck-creating");
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const db = await PGlite.create(staging, PGLITE_OPTIONS);
  await db.close();
  const entries = (await readdir(staging)).filter((entry) => entry !== "PG_VERSION");
  for (const entry of [...entries, "PG_VERSION"]) {
    await rm(path.join(dataDir, entry), { recursive: true, force: true });
    await rename(path.join(staging, entry), path.join(dataDir, entry));
  }
  await rm(staging, { recursive: true });
} catch (error) {
  // The opening process quotes this line in its error.
  process.stderr.write(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
