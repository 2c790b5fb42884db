import { parseArgs } from "node:util";
import {
  type AdminCommand,
  AdminCommandError,
  parseAdminCommand,
} from "../admin/admin-commands.ts";
import { COMMANDS, type CommandSpec, type Flags, UsageError } from "./command-specs.ts";
import { commandUsage, groupUsage, ROOT_USAGE, VERSION_TEXT } from "./help-texts.ts";

const isHelp = (arg: string | undefined) => arg === "--help" || arg === "-h";
// -v as in node and npm: formdeck has no verbose mode for it to be confused with.
const isVersion = (arg: string | undefined) => arg === "--version" || arg === "-v";

function refuseExtra(args: string[], hint: string) {
  if (args[0] !== undefined) {
    throw new UsageError(`unexpected argument ${JSON.stringify(args[0])} (see "${hint}")`);
  }
}

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

/** "formdeck help [<group> [<command>]]": the text "--help" prints at the same level. */
function helpFor(args: string[]): string {
  const [groupName, actionName, ...extra] = args.filter((arg) => !isHelp(arg));
  if (groupName === undefined) return ROOT_USAGE;
  const group = lookup(COMMANDS, groupName, "command", "formdeck help");
  if (actionName === undefined) return groupUsage(groupName);
  const spec = lookup(group, actionName, `${groupName} command`, `formdeck help ${groupName}`);
  refuseExtra(extra, `formdeck help ${groupName} ${actionName}`);
  return commandUsage(spec);
}

/**
 * Reads the arguments after "formdeck": either a text to print (help, version) or a checked
 * command. Throws UsageError, naming the help to read, for anything the line gets wrong.
 */
export function parseCommandLine(argv: string[]): { text: string } | { command: AdminCommand } {
  const [groupName, actionName, ...args] = argv;
  if (isHelp(groupName)) return { text: ROOT_USAGE };
  if (groupName === "help") return { text: helpFor(argv.slice(1)) };
  if (isVersion(groupName)) {
    refuseExtra(argv.slice(1), "formdeck --help");
    return { text: VERSION_TEXT };
  }
  const group = lookup(COMMANDS, groupName, "command", "formdeck --help");
  if (isHelp(actionName)) return { text: groupUsage(groupName as string) };
  const spec = lookup(group, actionName, `${groupName} command`, `formdeck ${groupName} --help`);
  // Help wins over any other mistake on the line; after "--" everything is a positional.
  const end = args.indexOf("--");
  if (args.slice(0, end === -1 ? args.length : end).some(isHelp)) {
    return { text: commandUsage(spec) };
  }
  try {
    const { flags, positionals } = parseFlags(spec, args);
    return { command: parseAdminCommand(spec.build(flags, positionals)) };
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof AdminCommandError)) throw error;
    throw new UsageError(`${error.message} (see "formdeck ${groupName} ${actionName} --help")`);
  }
}
