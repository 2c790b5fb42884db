import { AdminCommandError } from "./admin/admin-commands.ts";
import { runOnConfiguredStore } from "./admin/admin-runner.ts";
import { UsageError } from "./cli/command-specs.ts";
import { parseCommandLine } from "./cli/parse-command-line.ts";
import { loadConfig } from "./config.ts";

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

/** One line, whatever the error: some (a failed connection to two addresses) have no message. */
function oneLine(error: unknown): string {
  const text =
    error instanceof Error
      ? error.message || (error as NodeJS.ErrnoException).code || error.name
      : String(error);
  return text.replace(/\s+/g, " ").trim();
}

export async function main(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  try {
    const parsed = parseCommandLine(argv);
    if ("text" in parsed) {
      io.stdout.write(parsed.text);
      return 0;
    }
    const result = await runOnConfiguredStore(loadConfig(io.env), parsed.command);
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`formdeck: ${oneLine(error)}\n`);
    return error instanceof UsageError || error instanceof AdminCommandError ? 2 : 1;
  }
}
