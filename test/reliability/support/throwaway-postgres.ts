import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { findExecutable, freePort } from "./ports.ts";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of this test's own (initdb in a temporary directory, a free port, its
 * Unix socket in that directory): it can be restarted and crashed without touching the shared
 * server that CI and others use.
 */
export interface ThrowawayPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
  /** `pg_ctl restart -m <mode>`; resolves when the server accepts connections again. */
  restart(mode: "fast" | "immediate"): Promise<void>;
  stop(mode: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** The server's log so far. */
  log(): string;
  /** Stops the cluster and removes its directory; safe to call more than once. */
  destroy(): Promise<void>;
}

interface Tools {
  bin: string;
  /** Runs the tools as this user when we are root: initdb and pg_ctl refuse to run as root. */
  asUser: { name: string; uid: number; gid: number } | null;
}

function binDirectory(): string | null {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) return existsSync(path.join(fromEnv, "pg_ctl")) ? fromEnv : null;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = path.join(root, version, "bin");
      if (existsSync(path.join(bin, "initdb")) && existsSync(path.join(bin, "pg_ctl"))) return bin;
    }
  }
  const initdb = findExecutable("initdb");
  return initdb && findExecutable("pg_ctl") ? path.dirname(initdb) : null;
}

function systemUser(name: string) {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return null;
  const [, , uid, gid] = line.split(":");
  return { name, uid: Number(uid), gid: Number(gid) };
}

function tools(): Tools | string {
  const bin = binDirectory();
  if (!bin) return "PostgreSQL server binaries (initdb, pg_ctl) are not installed";
  if (process.getuid?.() !== 0) return { bin, asUser: null };
  const user = systemUser("postgres");
  if (!user) return "running as root and there is no postgres user to run initdb and pg_ctl as";
  if (!findExecutable("runuser", ["/usr/sbin", "/sbin"])) return "runuser is not installed";
  return { bin, asUser: user };
}

/** Why a throwaway cluster cannot be started here, or null when it can. */
export function throwawayPostgresUnavailable(): string | null {
  const found = tools();
  return typeof found === "string" ? found : null;
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const found = tools();
  if (typeof found === "string") throw new Error(found);
  const { bin, asUser } = found;
  const command = (tool: string, args: string[]): [string, string[]] =>
    asUser
      ? ["runuser", ["-u", asUser.name, "--", path.join(bin, tool), ...args]]
      : [path.join(bin, tool), args];
  const tool = (name: string, args: string[]) => run(...command(name, args), { timeout: 60_000 });

  const dir = mkdtempSync(path.join(tmpdir(), "fdpg-"));
  if (asUser) chownSync(dir, asUser.uid, asUser.gid);
  const data = path.join(dir, "data");
  const logFile = path.join(dir, "server.log");
  const port = await freePort();
  let destroyed = false;
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=50`;

  const stopNow = () => {
    if (destroyed) return;
    destroyed = true;
    try {
      execFileSync(...command("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]), {
        stdio: "ignore",
      });
    } catch {
      // Not running.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Whatever happens to the test, the cluster does not outlive this process.
  process.once("exit", stopNow);

  const pgCtl = (action: string, ...extra: string[]) =>
    tool("pg_ctl", ["-D", data, "-l", logFile, "-w", "-t", "60", ...extra, action]);

  try {
    await tool("initdb", [
      ...["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"],
      "--no-instructions",
    ]);
    await pgCtl("start", "-o", serverOptions);
  } catch (error) {
    stopNow();
    process.off("exit", stopNow);
    throw error;
  }

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    restart: async (mode) => void (await pgCtl("restart", "-m", mode)),
    stop: async (mode) => void (await pgCtl("stop", "-m", mode)),
    start: async () => void (await pgCtl("start", "-o", serverOptions)),
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    async destroy() {
      stopNow();
      process.off("exit", stopNow);
    },
  };
}
