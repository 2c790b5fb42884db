import { readFileSync } from "node:fs";

/** formdeck's version, read once at start from package.json, so that it is written in one place. */
export const PACKAGE_VERSION: string = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;
