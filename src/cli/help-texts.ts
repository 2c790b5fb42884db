import { COMMANDS, type CommandSpec } from "./command-specs.ts";

const synopses = (groups: string[]) =>
  groups.flatMap((group) =>
    Object.values(COMMANDS[group] ?? {}).map((c) => `  formdeck ${c.synopsis}`),
  );

export const ROOT_USAGE = `Usage:
${synopses(Object.keys(COMMANDS)).join("\n")}
  formdeck [<command>] --help

Manages the organizations and API keys of formdeck. Prints results as JSON.
Reads the server's environment: with DATABASE_URL it connects to PostgreSQL; otherwise
it asks the server running on DATA_DIR (default ./data) through its admin socket, or
opens DATA_DIR itself when no server runs there.
`;

export const groupUsage = (group: string) =>
  `Usage:\n${synopses([group]).join("\n")}\n\nRun "formdeck ${group} <command> --help" for details.\n`;

export const commandUsage = (spec: CommandSpec) =>
  `Usage: formdeck ${spec.synopsis}\n\n${spec.description}\n`;
