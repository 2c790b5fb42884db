import { startNode } from "./child-processes.ts";
import { FORMS_PATH, type LoadSpec, type LoadSummary } from "./load-spec.ts";

/** Runs bench/load.ts against a server and returns its summary. */
export async function runLoad(spec: LoadSpec): Promise<LoadSummary> {
  const child = startNode("bench/load.ts", process.env, {
    keepStdout: true,
    stdin: JSON.stringify(spec),
  });
  const code = await child.exited;
  if (code !== 0) throw new Error(`load generator exited (${code}):\n${child.lastLines()}`);
  return JSON.parse(child.stdout()) as LoadSummary;
}

/**
 * Waits until the server has worked off what the last run left behind. Requests that timed out on
 * the client side are still queued for the server's database pool; a list request joins the end
 * of that queue, so its answer means the next run starts on an idle server.
 */
export async function settle(origin: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(`${origin}${FORMS_PATH}?pageSize=1`, {
    headers,
    signal: AbortSignal.timeout(120_000),
  });
  await response.arrayBuffer();
}
