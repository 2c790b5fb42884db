// Opens the embedded store in the directory named by its one argument (creating it when new),
// as a server does, then prints this process's peak RSS (VmHWM) in MB: for pglite-creation.test.ts.
import { readFile } from "node:fs/promises";
import { openDatabase } from "../../src/db/database.ts";

const db = await openDatabase({ databaseUrl: null, dataDir: process.argv[2] as string });
await db.query("SELECT 1");
await db.close();
const status = await readFile("/proc/self/status", "utf8");
process.stdout.write(String(Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024));
