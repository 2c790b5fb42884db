import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { main } from "../../src/cli.ts";

const root = path.resolve(import.meta.dirname, "../..");
const node = path.join(root, "node_modules/.bin/node");
const { version } = JSON.parse(await readFile(path.join(root, "package.json"), "utf8"));

async function inProcess(args: string[]) {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {},
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

const printed = (stdout: string) => ({ code: 0, stdout, stderr: "" });
const refused = (stderr: string) => ({ code: 2, stdout: "", stderr });

const ROOT_HELP = `Usage:
  formdeck org create --name <name> [--plan free|paid]
  formdeck org list
  formdeck org plan <orgId> <free|paid>
  formdeck key create --org <orgId> --scope <read|full> [--name <label>]
  formdeck key list --org <orgId>
  formdeck key revoke <keyId>
  formdeck submissions export --form <formId> [--format csv|ndjson]
  formdeck help [<command>]
  formdeck [<command>] --help
  formdeck --version

Manages the organizations and API keys of formdeck and exports submissions. Prints results
as JSON; an export prints CSV or NDJSON.
Reads the server's environment: with DATABASE_URL it connects to PostgreSQL; otherwise
it asks the server running on DATA_DIR (default ./data) through its admin socket, or
opens DATA_DIR itself when no server runs there.
`;

const ORG_HELP = `Usage:
  formdeck org create --name <name> [--plan free|paid]
  formdeck org list
  formdeck org plan <orgId> <free|paid>

Run "formdeck org <command> --help" for details.
`;

const KEY_REVOKE_HELP = `Usage: formdeck key revoke <keyId>

Revoke a key: requests that use it are refused from then on.
`;

describe("formdeck --version", () => {
  test("bin/formdeck.js prints the package's version alone and exits 0", async () => {
    assert.match(version, /^\d+\.\d+\.\d+/);
    const { stdout, stderr } = await promisify(execFile)(node, ["bin/formdeck.js", "--version"], {
      cwd: root,
    });
    assert.deepEqual({ stdout, stderr }, { stdout: `${version}\n`, stderr: "" });
  });

  test("-v is the same", async () => {
    assert.deepEqual(await inProcess(["-v"]), printed(`${version}\n`));
  });

  test("refuses anything after it", async () => {
    assert.deepEqual(
      await inProcess(["--version", "org"]),
      refused('formdeck: unexpected argument "org" (see "formdeck --help")\n'),
    );
  });
});

describe("formdeck help", () => {
  const same: [string[], string[], string][] = [
    [["help"], ["--help"], ROOT_HELP],
    [["help", "--help"], ["-h"], ROOT_HELP],
    [["help", "org"], ["org", "--help"], ORG_HELP],
    [["help", "key", "revoke"], ["key", "revoke", "--help"], KEY_REVOKE_HELP],
  ];
  for (const [helpArgs, flagArgs, text] of same) {
    test(`formdeck ${helpArgs.join(" ")} prints what formdeck ${flagArgs.join(" ")} does`, async () => {
      assert.deepEqual(await inProcess(helpArgs), printed(text));
      assert.deepEqual(await inProcess(flagArgs), printed(text));
    });
  }

  const mistakes: [string[], string][] = [
    [["help", "forms"], 'unknown command "forms" (see "formdeck help")'],
    [["help", "org", "delete"], 'unknown org command "delete" (see "formdeck help org")'],
    [
      ["help", "org", "create", "now"],
      'unexpected argument "now" (see "formdeck help org create")',
    ],
  ];
  for (const [args, message] of mistakes) {
    test(`formdeck ${args.join(" ")} is a usage error`, async () => {
      assert.deepEqual(await inProcess(args), refused(`formdeck: ${message}\n`));
    });
  }
});
