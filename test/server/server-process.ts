import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const root = path.resolve(import.meta.dirname, "../..");
const node = process.execPath;

export interface RunningServer {
  url: string;
  child: ChildProcess;
  /** Every line the process wrote, stdout and stderr. */
  output: string[];
  /** Sends `signal` and resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export const tempDataDir = () => mkdtemp(path.join(tmpdir(), "formdeck-"));

/** Starts `src/server.ts` as a real process on a free port and waits until it listens. */
export function startServer(env: Record<string, string | undefined>): Promise<RunningServer> {
  const child = spawn(node, ["src/server.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  // "close", not "exit": the last lines a process wrote are read by then.
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const onLine = (line: string) => {
      output.push(line);
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match?.[1]) {
        resolve({
          url: match[1],
          child,
          output,
          stop: (signal = "SIGTERM") => {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = "";
      stream?.setEncoding("utf8").on("data", (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        lines.forEach(onLine);
      });
    }
    void exited.then((code) =>
      reject(new Error(`server exited (${code}) before listening:\n${output.join("\n")}`)),
    );
  });
}

/** Runs the `formdeck` CLI with `env` and parses its JSON output. */
export async function cli<T>(args: string[], env: Record<string, string | undefined>): Promise<T> {
  const { stdout } = await promisify(execFile)(node, ["bin/formdeck.js", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout) as T;
}

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runToExit(args: string[], env: Record<string, string | undefined>, cwd: string) {
  return new Promise<Exit>((resolve, reject) => {
    execFile(node, args, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") reject(error);
      else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

/** Runs `src/server.ts` with `env` in `cwd` and resolves how it ended: for starts that fail. */
export const runServerToExit = (env: Record<string, string | undefined>, cwd = root) =>
  runToExit(
    [path.join(root, "src/server.ts")],
    { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env },
    cwd,
  );

/** Runs the `formdeck` CLI with `env` and resolves how it ended, whether it failed or not. */
export const runCli = (args: string[], env: Record<string, string | undefined>) =>
  runToExit(["bin/formdeck.js", ...args], { ...process.env, ...env }, root);
