import { parseArgs } from "node:util";
import {
  type AdminCommand,
  AdminCommandError,
  type AdminResult,
  parseAdminCommand,
  runAdminCommand,
} from "./admin/admin-commands.ts";
import {
  adminSocketPath,
  DataDirInUseError,
  listenAdminSocket,
  sendAdminCommand,
} from "./admin/admin-socket.ts";
import { type Config, loadConfig } from "./config.ts";
import { type Database, type DatabaseOptions, openDatabase } from "./db/database.ts";
import { migrate } from "./db/migrations.ts";

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

/** The command line itself is wrong: exit code 2, as is customary for usage errors. */
class UsageError extends Error {}

type Flags = Record<string, string | undefined>;

interface CommandSpec {
  synopsis: string;
  description: string;
  flags: readonly string[];
  /** Names of the required positional arguments, in order, as shown in the synopsis. */
  positionals: readonly string[];
  /** The raw command; parseAdminCommand checks its values, as it does for the socket. */
  build(flags: Flags, positionals: string[]): Record<string, unknown>;
}

const required = (flags: Flags, flag: string, placeholder: string) => {
  const value = flags[flag];
  if (value === undefined) throw new UsageError(`missing --${flag} ${placeholder}`);
  return value;
};

const COMMANDS: Record<string, Record<string, CommandSpec>> = {
  org: {
    create: {
      synopsis: "org create --name <name> [--plan free|paid]",
      description: "Create an organization. --plan defaults to free.",
      flags: ["name", "plan"],
      positionals: [],
      build: (flags) => ({
        type: "org.create",
        name: required(flags, "name", "<name>"),
        plan: flags.plan ?? "free",
      }),
    },
    list: {
      synopsis: "org list",
      description: "List all organizations, oldest first.",
      flags: [],
      positionals: [],
      build: () => ({ type: "org.list" }),
    },
    plan: {
      synopsis: "org plan <orgId> <free|paid>",
      description: "Move an organization to another plan.",
      flags: [],
      positionals: ["<orgId>", "<free|paid>"],
      build: (_, [organizationId, plan]) => ({ type: "org.plan", organizationId, plan }),
    },
  },
  key: {
    create: {
      synopsis: "key create --org <orgId> --scope <read|full> [--name <label>]",
      description:
        'Create an API key. Its secret, "key", is printed this once and never again: store it now.\n--name defaults to "unnamed".',
      flags: ["org", "scope", "name"],
      positionals: [],
      build: (flags) => ({
        type: "key.create",
        organizationId: required(flags, "org", "<orgId>"),
        scope: required(flags, "scope", "<read|full>"),
        name: flags.name ?? "unnamed",
      }),
    },
    list: {
      synopsis: "key list --org <orgId>",
      description: "List an organization's keys, oldest first, without their secrets.",
      flags: ["org"],
      positionals: [],
      build: (flags) => ({ type: "key.list", organizationId: required(flags, "org", "<orgId>") }),
    },
    revoke: {
      synopsis: "key revoke <keyId>",
      description: "Revoke a key: requests that use it are refused from then on.",
      flags: [],
      positionals: ["<keyId>"],
      build: (_, [keyId]) => ({ type: "key.revoke", keyId }),
    },
  },
};

const synopses = (groups: string[]) =>
  groups.flatMap((group) =>
    Object.values(COMMANDS[group] ?? {}).map((c) => `  formdeck ${c.synopsis}`),
  );

const ROOT_USAGE = `Usage:
${synopses(Object.keys(COMMANDS)).join("\n")}
  formdeck [<command>] --help

Manages the organizations and API keys of formdeck. Prints results as JSON.
Reads the server's environment: with DATABASE_URL it connects to PostgreSQL; otherwise
it asks the server running on DATA_DIR (default ./data) through its admin socket, or
opens DATA_DIR itself when no server runs there.
`;

const groupUsage = (group: string) =>
  `Usage:\n${synopses([group]).join("\n")}\n\nRun "formdeck ${group} <command> --help" for details.\n`;

const commandUsage = (spec: CommandSpec) =>
  `Usage: formdeck ${spec.synopsis}\n\n${spec.description}\n`;

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

function parseCommandLine(argv: string[]): { help: string } | { command: AdminCommand } {
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

async function openMigrated(options: DatabaseOptions): Promise<Database> {
  const db = await openDatabase(options);
  try {
    await migrate(db);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

async function runOnPostgres(databaseUrl: string, command: AdminCommand): Promise<AdminResult> {
  const db = await openMigrated({ databaseUrl, dataDir: null });
  try {
    return await runAdminCommand(db, command);
  } finally {
    await db.close();
  }
}

const CLAIM_ATTEMPTS = 3;

/** Opens the store while holding its admin socket, so that no server opens it meanwhile. */
async function runHoldingSocket(dataDir: string, command: AdminCommand): Promise<AdminResult> {
  const store = Promise.withResolvers<Database>();
  // Only commands of other CLIs queued on the socket wait for it; ours reports its own failure.
  store.promise.catch(() => {});
  const socket = await listenAdminSocket({
    db: { query: async (sql, params) => (await store.promise).query(sql, params) },
    socketPath: adminSocketPath(dataDir),
    log: { error() {} },
  });
  let db: Database | undefined;
  try {
    store.resolve(openMigrated({ databaseUrl: null, dataDir }));
    db = await store.promise;
    return await runAdminCommand(db, command);
  } finally {
    // The socket first: commands queued on it finish before the store closes.
    await socket.close();
    await db?.close();
  }
}

/** The embedded store belongs to one process: ask the one running on DATA_DIR, if any. */
async function runOnEmbeddedStore(dataDir: string, command: AdminCommand): Promise<AdminResult> {
  // Other CLIs may claim the socket between our two steps, and then answer on it.
  for (let attempt = 1; ; attempt++) {
    const reply = await sendAdminCommand(adminSocketPath(dataDir), command);
    if (reply.kind === "result") return reply.result;
    try {
      return await runHoldingSocket(dataDir, command);
    } catch (error) {
      if (!(error instanceof DataDirInUseError) || attempt === CLAIM_ATTEMPTS) throw error;
    }
  }
}

function execute(config: Config, command: AdminCommand): Promise<AdminResult> {
  if (config.databaseUrl) return runOnPostgres(config.databaseUrl, command);
  // loadConfig always resolves a DATA_DIR; only tests build configs with an in-memory store.
  return runOnEmbeddedStore(config.dataDir as string, command);
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
    if ("help" in parsed) {
      io.stdout.write(parsed.help);
      return 0;
    }
    const result = await execute(loadConfig(io.env), parsed.command);
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`formdeck: ${oneLine(error)}\n`);
    return error instanceof UsageError || error instanceof AdminCommandError ? 2 : 1;
  }
}
