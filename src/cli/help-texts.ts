import packageJson from "../../package.json" with { type: "json" };
import { COMMANDS, type CommandSpec } from "./command-specs.ts";

/** What `formdeck --version` prints: the installed package's version, nothing else, for scripts. */
export const VERSION_TEXT = `${packageJson.version}\n`;

const synopses = (groups: string[]) =>
  groups.flatMap((group) =>
    Object.values(COMMANDS[group] ?? {}).map((c) => `  formdeck ${c.synopsis}`),
  );

export const ROOT_USAGE = `Usage:
${synopses(Object.keys(COMMANDS)).join("\n")}
  formdeck help [<command>]
  formdeck [<command>] --help
  formdeck --version

Manages the organizations and API keys of formdeck and exports submissions. Prints results
as JSON; an export prints CSV or NDJSON.
Reads the server's environment: with DATABASE_URL it connects to PostgreSQL; otherwise
it asks the server running on DATA_DIR (default ./data) through its admin socket, or
opens DATA_DIR itself when no server runs there.
`;

export const groupUsage = (group: string) =>
  `Usage:\n${synopses([group]).join("\n")}\n\nRun "formdeck ${group} <command> --help" for details.\n`;

export const commandUsage = (spec: CommandSpec) =>
  `Usage: formdeck ${spec.synopsis}\n\n${spec.description}\n`;
