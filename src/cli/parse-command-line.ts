import { parseArgs } from "node:util";
import {
  type AdminCommand,
  AdminCommandError,
  parseAdminCommand,
} from "../admin/admin-commands.ts";
import { COMMANDS, type CommandSpec, type Flags, UsageError } from "./command-specs.ts";
import { commandUsage, groupUsage, ROOT_USAGE } from "./help-texts.ts";

const isHelp = (arg: string | undefined) => arg === "--help" || arg === "-h";

function lookup<T>(table: Record<string, T>, name: string | undefined, what: string, hint: string) {
  if (name === undefined) throw new UsageError(`missing ${what} (see "${hint}")`);
  if (!Object.hasOwn(table, name)) {
    throw new UsageError(`unknown ${what} ${JSON.stringify(name)} (see "${hint}")`);
  }
  return table[name] as T;
}

/** Node's messages for these can span lines; the CLI promises exactly one. */
function flagError(error: Error & { code?: string }): UsageError {
  const option = /'(--?[^' ]+)/.exec(error.message)?.[1] ?? "an option";
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
    return new UsageError(`unknown option ${option}`);
  return new UsageError(`${option} needs a value (write ${option}=<value> if it starts with "-")`);
}

function parseFlags(spec: CommandSpec, args: string[]): { flags: Flags; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: Object.fromEntries(spec.flags.map((f) => [f, { type: "string", multiple: true }])),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw flagError(error as Error);
  }
  const flags: Flags = {};
  for (const [flag, values] of Object.entries(parsed.values as Record<string, string[]>)) {
    if (values.length > 1) throw new UsageError(`--${flag} given more than once`);
    flags[flag] = values[0];
  }
  const missing = spec.positionals[parsed.positionals.length];
  if (missing !== undefined) throw new UsageError(`missing ${missing}`);
  const extra = parsed.positionals[spec.positionals.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
  return { flags, positionals: parsed.positionals };
}

/**
 * Reads the arguments after "formdeck": either a help text to print or a checked command.
 * Throws UsageError, naming the help to read, for anything the line gets wrong.
 */
export function parseCommandLine(argv: string[]): { help: string } | { command: AdminCommand } {
  const [groupName, actionName, ...args] = argv;
  if (isHelp(groupName)) return { help: ROOT_USAGE };
  const group = lookup(COMMANDS, groupName, "command", "formdeck --help");
  if (isHelp(actionName)) return { help: groupUsage(groupName as string) };
  const spec = lookup(group, actionName, `${groupName} command`, `formdeck ${groupName} --help`);
  // Help wins over any other mistake on the line; after "--" everything is a positional.
  const end = args.indexOf("--");
  if (args.slice(0, end === -1 ? args.length : end).some(isHelp)) {
    return { help: commandUsage(spec) };
  }
  try {
    const { flags, positionals } = parseFlags(spec, args);
    return { command: parseAdminCommand(spec.build(flags, positionals)) };
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof AdminCommandError)) throw error;
    throw new UsageError(`${error.message} (see "formdeck ${groupName} ${actionName} --help")`);
  }
}
