import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import path from "node:path";

export const projectRoot = path.resolve(import.meta.dirname, "..");
const exitWithParent = path.join(projectRoot, "bench/servers/exit-with-parent.ts");

export interface Child {
  process: ChildProcess;
  /** Everything the process wrote on stdout. */
  stdout(): string;
  /** The last lines it wrote on stderr (and on stdout, for servers), for error messages. */
  lastLines(): string;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

// Whatever ends the bench (an error, Ctrl-C, a failed target), no child outlives it.
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => process.exit(130));
}

/** Starts `node [nodeFlags] <script>` from the project root; killed when the bench exits. */
export function startNode(
  script: string,
  env: NodeJS.ProcessEnv,
  options: { keepStdout?: boolean; stdin?: string; nodeFlags?: string[] } = {},
): Child {
  const args = [...(options.nodeFlags ?? []), "--import", exitWithParent, script];
  const child = spawn(process.execPath, args, {
    cwd: projectRoot,
    env,
    stdio: ["pipe", "pipe", "pipe", "ipc"],
  });
  running.add(child);
  const { stdin, stdout: out, stderr } = child;
  if (!stdin || !out || !stderr) throw new Error("spawn gave no stdio pipes");
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  let stdout = "";
  const tail: string[] = [];
  const remember = (chunk: string) => {
    tail.push(...chunk.split("\n").filter((line) => line !== ""));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  out.setEncoding("utf8").on("data", (chunk: string) => {
    // A server's stdout is its log: only its end is worth keeping over a long run.
    if (options.keepStdout) stdout += chunk;
    else remember(chunk);
  });
  stderr.setEncoding("utf8").on("data", remember);
  stdin.end(options.stdin ?? "");
  return { process: child, stdout: () => stdout, lastLines: () => tail.join("\n"), exited };
}

/** Stops a child with SIGTERM (servers drain their requests), SIGKILL if it lingers. */
export async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill("SIGTERM");
  const timer = setTimeout(() => child.process.kill("SIGKILL"), 10_000);
  await child.exited;
  clearTimeout(timer);
}

/** A loopback port that is free now; the server started next binds it. */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/**
 * Waits until the child accepts connections on `port`. Servers listen only once their store is
 * open and migrated, so accepting means ready; this needs no log line (LOG_LEVEL=warn hides
 * Fastify's "Server listening at").
 */
export async function waitForPort(child: Child, port: number, name: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) {
      throw new Error(
        `${name} exited (${child.process.exitCode}) before listening:\n${child.lastLines()}`,
      );
    }
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} did not listen on port ${port} within 120 s:\n${child.lastLines()}`);
}
