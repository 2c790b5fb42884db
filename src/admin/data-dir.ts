import type { Stats } from "node:fs";
import { mkdir, stat } from "node:fs/promises";

/** DATA_DIR cannot be used: the message names the directory and what to do, on one line. */
export class DataDirError extends Error {}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** The path as a shell word, so that the command in a message can be pasted as it is. */
const shellWord = (text: string) =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;

/**
 * Creates DATA_DIR as 0700 when missing, and refuses one that other users can enter or that
 * belongs to another user, as PostgreSQL does with its data directory. The directory is the
 * only guard: PGlite writes its files 0666 whatever the umask, the WAL holds every secret, and
 * whoever can write `global/pg_control` can destroy the store.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  let stats: Stats | undefined;
  try {
    // The mode applies to every directory this creates; the umask cannot widen it.
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    stats = await stat(dataDir);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code !== "EEXIST" && code !== "ENOTDIR") {
      throw new DataDirError(`DATA_DIR ${dataDir} cannot be created or read: ${message}`);
    }
  }
  if (!stats?.isDirectory()) {
    throw new DataDirError(`DATA_DIR ${dataDir} is not a directory: point DATA_DIR at one`);
  }
  const uid = process.getuid?.();
  // Windows has neither uids nor POSIX modes: there its ACLs are the operator's to set.
  if (uid === undefined) return;
  if (stats.uid !== uid) {
    throw new DataDirError(
      `DATA_DIR ${dataDir} belongs to another user (uid ${stats.uid}, this process runs as uid ${uid}): run formdeck as its owner, or use a DATA_DIR of your own`,
    );
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new DataDirError(
      `DATA_DIR ${dataDir} can be opened by other users (mode ${octal(stats.mode)}): run "chmod 700 ${shellWord(dataDir)}" and start again`,
    );
  }
}
