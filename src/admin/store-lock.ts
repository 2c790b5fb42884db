import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { DataDirError } from "./data-dir.ts";

/** Another live process holds the embedded store. */
export class StoreLockedError extends DataDirError {
  readonly holderPid: number;
  constructor(dataDir: string, holderPid: number) {
    super(
      `DATA_DIR ${dataDir} is in use by another formdeck process (pid ${holderPid}): stop it first, or use another DATA_DIR`,
    );
    this.holderPid = holderPid;
  }
}

export interface StoreLock {
  /** Removes the lock file, if it is still this lock's. */
  release(): Promise<void>;
}

export const storeLockPath = (dataDir: string) => path.join(dataDir, "formdeck.pid");

// Locks this process holds: its own pid in a lock file means "held" only if it is listed here.
const heldHere = new Set<string>();

/**
 * The start time of process `pid` (clock ticks since boot, Linux's /proc), or null where there
 * is no /proc. With it, a pid reused by another process after a crash is not taken for the
 * holder, which would refuse every start until someone removed the file by hand.
 */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name, in parentheses, may hold spaces: fields are counted after it.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

interface Holder {
  pid: number;
  startTime: string | null;
}

/** The lock file's first line is the pid, as in any pid file; the second its start time. */
function parseHolder(content: string): Holder | null {
  const [pid = "", startTime = ""] = content.split("\n");
  if (!/^[1-9][0-9]{0,9}$/.test(pid)) return null;
  return { pid: Number(pid), startTime: startTime || null };
}

function isRunning(holder: Holder, lockPath: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(lockPath);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists, under another user.
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const startTime = holder.startTime && startTimeOf(holder.pid);
  return !startTime || startTime === holder.startTime;
}

const readIfExists = (file: string) =>
  readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });

/**
 * Removes the lock file a dead process left, and only that one: moved aside first (atomic),
 * it is put back if it turns out to be a live process's that took its place meanwhile.
 */
async function removeStale(lockPath: string, staleContent: string): Promise<void> {
  const aside = `${lockPath}.stale-${randomUUID()}`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if ((await readFile(aside, "utf8")) !== staleContent) {
    await link(aside, lockPath).catch(() => {});
  }
  await rm(aside, { force: true });
}

/**
 * Takes the embedded store's lock, a pid file in DATA_DIR, for as long as the store is open:
 * the server for its whole life, the CLI for one command. The file appears whole and at once
 * (written aside, then hard-linked, which fails if it exists), so a reader never sees it
 * half-written; a file whose process is gone is taken over. Throws StoreLockedError while a
 * live process holds it.
 */
export async function acquireStoreLock(dataDir: string): Promise<StoreLock> {
  const lockPath = storeLockPath(dataDir);
  const content = `${process.pid}\n${startTimeOf(process.pid) ?? ""}\n`;
  const draft = `${lockPath}.${randomUUID()}`;
  await writeFile(draft, content, { mode: 0o600, flag: "wx" });
  try {
    // Each pass either takes the lock, meets a live holder, or removes a stale file.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(draft, lockPath);
        heldHere.add(lockPath);
        return { release: () => release(lockPath, content) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const found = await readIfExists(lockPath);
      if (found === null) continue;
      const holder = parseHolder(found);
      if (holder && isRunning(holder, lockPath)) throw new StoreLockedError(dataDir, holder.pid);
      await removeStale(lockPath, found);
    }
    throw new DataDirError(
      `DATA_DIR ${dataDir}: its lock file ${lockPath} keeps changing hands: another process is starting on it`,
    );
  } finally {
    await rm(draft, { force: true });
  }
}

async function release(lockPath: string, content: string): Promise<void> {
  if (!heldHere.delete(lockPath)) return;
  if ((await readIfExists(lockPath)) === content) await rm(lockPath, { force: true });
}
