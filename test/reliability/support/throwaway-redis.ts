import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { findExecutable, freePort, waitUntil } from "./ports.ts";

/**
 * A redis-server of this test's own, on a free port, without persistence: it can be killed,
 * restarted and frozen without touching the shared Redis that CI and others use.
 */
export interface ThrowawayRedis {
  readonly url: string;
  readonly port: number;
  /** The running process's id, or null while it is down. */
  pid(): number | null;
  /** SIGKILL, and waits until the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and waits until it answers PING. */
  restart(): Promise<void>;
  /** SIGSTOP: the process hangs, its port still accepts connections. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Stops it for good; safe to call more than once. */
  destroy(): Promise<void>;
}

const redisServerBinary = () => findExecutable("redis-server", ["/usr/bin", "/usr/local/bin"]);

/** Why a throwaway Redis cannot be started here, or null when it can. */
export const throwawayRedisUnavailable = () =>
  redisServerBinary() ? null : "redis-server is not installed (not on PATH)";

/** Whether something on `port` answers PING with PONG. */
export function redisAnswers(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")));
  });
}

export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const binary = redisServerBinary();
  if (!binary) throw new Error("redis-server is not installed");
  const port = await freePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const cleanupOnExit = () => child?.kill("SIGKILL");
  process.once("exit", cleanupOnExit);

  async function launch() {
    const started = spawn(
      binary as string,
      [
        ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        ...["--daemonize", "no", "--loglevel", "warning"],
      ],
      { stdio: "ignore" },
    );
    child = started;
    exited = new Promise((resolve) => started.once("exit", () => resolve()));
    await waitUntil(`throwaway redis-server on port ${port}`, () => redisAnswers(port), 10_000);
  }

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () =>
      child && child.exitCode === null && child.signalCode === null ? (child.pid ?? null) : null,
    async kill() {
      child?.kill("SIGCONT");
      child?.kill("SIGKILL");
      await exited;
    },
    restart: launch,
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    async destroy() {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGCONT");
        child.kill("SIGKILL");
        await exited;
      }
      process.off("exit", cleanupOnExit);
    },
  };
}
