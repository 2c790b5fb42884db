#!/usr/bin/env node
// Plain JavaScript on purpose: this file must run on any Node, to find one that can run the
// TypeScript sources (type stripping: Node >= 22.18 or >= 23.6) when the one it got cannot.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

if (process.features.typescript) {
  // The same `.env` as `npm start` reads; variables already set win, as with --env-file.
  if (existsSync(".env")) process.loadEnvFile(".env");
  const { main } = await import("../src/cli.ts");
  process.exitCode = await main(process.argv.slice(2));
} else {
  process.exitCode = runWithBundledNode();
}

/** Runs this script again under the Node 24 that the `node` npm package installs with formdeck. */
function runWithBundledNode() {
  let bundledNode;
  try {
    const nodePackage = createRequire(import.meta.url).resolve("node/package.json");
    bundledNode = path.join(path.dirname(nodePackage), "bin", "node");
  } catch {
    bundledNode = null;
  }
  if (!bundledNode || bundledNode === process.execPath) {
    process.stderr.write(
      `formdeck: needs Node >= 22.18 (this is ${process.version}); run "npm install" to get it\n`,
    );
    return 1;
  }
  const child = spawnSync(bundledNode, [process.argv[1], ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  if (child.error) {
    process.stderr.write(`formdeck: cannot start ${bundledNode}: ${child.error.message}\n`);
    return 1;
  }
  // A child killed by a signal has no status; 128 + signal number is the shell's convention.
  return child.status ?? 128 + (os.constants.signals[child.signal] ?? 0);
}
