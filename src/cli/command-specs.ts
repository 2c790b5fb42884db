/** The command line itself is wrong: exit code 2, as is customary for usage errors. */
export class UsageError extends Error {}

export type Flags = Record<string, string | undefined>;

export interface CommandSpec {
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

/** Every command of the CLI, by group and action: "formdeck <group> <action> ...". */
export const COMMANDS: Record<string, Record<string, CommandSpec>> = {
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
  submissions: {
    export: {
      synopsis: "submissions export --form <formId> [--format csv|ndjson]",
      description:
        "Write a form's submissions (not spam, newest first) to stdout, byte for byte as the API's\n" +
        "export sends them: CSV (the default) or NDJSON, one submission per line. Streams: memory\n" +
        "stays the same whatever their number. Works while the server runs.",
      flags: ["form", "format"],
      positionals: [],
      build: (flags) => ({
        type: "submissions.export",
        formId: required(flags, "form", "<formId>"),
        format: flags.format ?? "csv",
      }),
    },
  },
};
