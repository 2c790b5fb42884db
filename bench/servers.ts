import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  type Child,
  freePort,
  projectRoot,
  startNode,
  stopChild,
  waitForPort,
} from "./child-processes.ts";

export type ServerName =
  | "formdeck"
  | "formdeck with Redis"
  | "formdeck without auth"
  | "minimal handler"
  | "runtime limit"
  | "formdeck embedded"
  | "webhook receiver"
  | "SMTP sink";

export interface RunningServer {
  name: ServerName;
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The environment and Node flags `npm start` runs formdeck with (package.json), so that the bench
 * measures it as deployed. Its `--env-file` is left out: the bench sets every variable a server
 * reads.
 */
export async function npmStartCommand(): Promise<{
  env: Record<string, string>;
  nodeFlags: string[];
}> {
  const manifest = JSON.parse(await readFile(path.join(projectRoot, "package.json"), "utf8"));
  const words = String(manifest.scripts?.start ?? "").split(/\s+/);
  const env: Record<string, string> = {};
  // Leading NAME=value words are the environment the shell gives node.
  while (/^[A-Z_]+=/.test(words[0] ?? "")) {
    const [name, value] = (words.shift() as string).split("=", 2) as [string, string];
    env[name] = value;
  }
  // `exec` hands the shell's process to node, so that signals reach the server.
  if (words[0] === "exec") words.shift();
  const script = words.indexOf("src/server.ts");
  if (words[0] !== "node" || script === -1) {
    throw new Error(
      `package.json: "start" is not "[NAME=value …] [exec] node [flags] src/server.ts"`,
    );
  }
  const nodeFlags = words.slice(1, script).filter((flag) => !flag.startsWith("--env-file"));
  return { env, nodeFlags };
}

/** The same as one line: `NAME=value … --flag …`. */
export async function npmStartSettings(): Promise<string> {
  const { env, nodeFlags } = await npmStartCommand();
  return [...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...nodeFlags].join(
    " ",
  );
}

export async function startServer(
  name: ServerName,
  script: string,
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<RunningServer> {
  const port = await freePort();
  const { DATABASE_URL: _db, REDIS_URL: _redis, DATA_DIR: _dir, ...inherited } = process.env;
  const child: Child = startNode(
    script,
    { ...inherited, ...env, HOST: "127.0.0.1", PORT: String(port) },
    { nodeFlags },
  );
  await waitForPort(child, port, name);
  return {
    name,
    origin: `http://127.0.0.1:${port}`,
    pid: child.process.pid as number,
    stop: () => stopChild(child),
  };
}

/** Settings every formdeck process gets: quiet logs and a quota no run can reach (no 429). */
const FORMDECK_ENV = {
  LOG_LEVEL: "warn",
  RATE_LIMIT_MAX: "1000000000",
  INTAKE_RATE_LIMIT_MAX: "1000000000",
};

export async function startFormdeckProcess(
  name: ServerName,
  script: string,
  env: Record<string, string>,
) {
  const npmStart = await npmStartCommand();
  return startServer(
    name,
    script,
    { ...npmStart.env, ...FORMDECK_ENV, ...env },
    npmStart.nodeFlags,
  );
}

/** formdeck as deployed on PostgreSQL: src/server.ts, in-process rate limiter (no REDIS_URL). */
export const startFormdeck = (databaseUrl: string) =>
  startFormdeckProcess("formdeck", "src/server.ts", { DATABASE_URL: databaseUrl });

/** The same with the Redis rate limiter, as several instances run. */
export const startFormdeckWithRedis = (databaseUrl: string, redisUrl: string) =>
  startFormdeckProcess("formdeck with Redis", "src/server.ts", {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
  });

/** formdeck on the embedded store (PGlite) in `dataDir`. */
export const startEmbeddedFormdeck = (dataDir: string) =>
  startFormdeckProcess("formdeck embedded", "src/server.ts", { DATA_DIR: dataDir });

/** The same app with the same flags, so that only the key check and the rate limit differ. */
export const startFormdeckWithoutAuth = (databaseUrl: string, organizationId: string) =>
  startFormdeckProcess("formdeck without auth", "bench/servers/formdeck-without-auth.ts", {
    DATABASE_URL: databaseUrl,
    BENCH_ORGANIZATION_ID: organizationId,
  });

export const startMinimalHandler = (databaseUrl: string, organizationId: string) =>
  startServer("minimal handler", "bench/servers/minimal-handler.ts", {
    DATABASE_URL: databaseUrl,
    BENCH_ORGANIZATION_ID: organizationId,
  });

export const startRuntimeLimit = (responseBody: string) =>
  startServer("runtime limit", "bench/servers/runtime-limit.ts", { RESPONSE_BODY: responseBody });

/**
 * The most resident memory process `pid` has used since it started (VmHWM), in MB; null once it
 * has exited.
 */
export async function highWaterMb(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => null);
  const kilobytes = status && /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  return kilobytes ? Number(kilobytes) / 1024 : null;
}

/** The server's VmHWM in MB. */
export async function peakRssMb(server: RunningServer): Promise<number> {
  const peak = await highWaterMb(server.pid);
  if (peak === null) throw new Error(`no VmHWM in /proc/${server.pid}/status`);
  return peak;
}
