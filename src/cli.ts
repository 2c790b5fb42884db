import { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { AdminCommandError, isStreamed } from "./admin/admin-commands.ts";
import { exportOnConfiguredStore, runOnConfiguredStore } from "./admin/admin-runner.ts";
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

/**
 * Where an export goes: process.stdout itself (its backpressure keeps memory flat), or, for a
 * caller's own text sink, a stream that decodes the bytes into it.
 */
function writableOf(out: CliIo["stdout"]): Writable {
  if (out instanceof Writable) return out;
  const decoder = new StringDecoder("utf8");
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.write(decoder.write(chunk));
      done();
    },
  });
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
    const config = loadConfig(io.env);
    if (isStreamed(parsed.command)) {
      await exportOnConfiguredStore(config, parsed.command, writableOf(io.stdout));
      return 0;
    }
    const result = await runOnConfiguredStore(config, parsed.command);
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    // The reader of an export stopped reading (`| head`): nothing is wrong, and no one listens.
    if ((error as NodeJS.ErrnoException).code === "EPIPE") return 0;
    io.stderr.write(`formdeck: ${oneLine(error)}\n`);
    return error instanceof UsageError || error instanceof AdminCommandError ? 2 : 1;
  }
}
