import { type RunningServer, startServer } from "../../server/server-process.ts";

/**
 * startServer (test/server-process.ts), bounded: a server that neither listens nor exits within
 * `timeoutMs` is killed and reported. It logs at `info`, which is where "Server listening" is.
 */
export async function startServerWithin(
  env: Record<string, string | undefined>,
  timeoutMs = 30_000,
): Promise<RunningServer> {
  const starting = startServer({ LOG_LEVEL: "info", ...env });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the server did not listen within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([starting, timeout]);
  } catch (error) {
    // It may still come up later: it must not outlive the test.
    void starting.then((server) => server.stop("SIGKILL")).catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Drops the server's request logs (`info` lines with a request id), so that a long load run does
 * not hold every line in memory. Returns the function that stops trimming.
 */
export function trimRequestLogs(server: RunningServer, everyMs = 1000): () => void {
  const trim = () => {
    const kept = server.output.filter(
      (line) => !(line.includes('"level":30') && line.includes('"reqId":')),
    );
    server.output.length = 0;
    server.output.push(...kept);
  };
  const timer = setInterval(trim, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    trim();
  };
}

/** Lines the server logged at `minLevel` or above (pino: 40 warn, 50 error) and any not JSON. */
/** Warnings a server prints at every start by design, not problems (notifications.md §2). */
const EXPECTED_WARNINGS = new Set(["SMTP_URL is not set: emails are recorded as skipped"]);

export function serverProblems(server: RunningServer, minLevel = 40): string[] {
  return server.output.filter((line) => {
    if (line.trim() === "") return false;
    try {
      const { level, msg } = JSON.parse(line) as { level?: unknown; msg?: unknown };
      if (typeof msg === "string" && EXPECTED_WARNINGS.has(msg)) return false;
      return typeof level !== "number" || level >= minLevel;
    } catch {
      return true;
    }
  });
}

/** Stops `server` if it still runs (SIGKILL: for clean-up after a failure). */
export async function killIfRunning(server: RunningServer | undefined) {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    await server.stop("SIGKILL");
  }
}

/** SIGTERM, and SIGKILL if the server has not exited within `ms`; resolves the exit code. */
export async function stopWithin(server: RunningServer, ms = 15_000): Promise<number | null> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) {
    return server.child.exitCode;
  }
  const timer = setTimeout(() => server.child.kill("SIGKILL"), ms);
  try {
    return await server.stop("SIGTERM");
  } finally {
    clearTimeout(timer);
  }
}
