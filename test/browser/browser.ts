import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium: .ci/run installs it with apt-get; playwright-core never downloads one. */
const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Why the browser tests cannot run here, or null when they can. Without Chromium they skip, and
 * say so loudly; with `REQUIRE_BROWSER=1` (CI) a missing browser fails the run instead.
 */
export function browserUnavailable(): string | null {
  if (existsSync(executablePath)) return null;
  const reason = `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.REQUIRE_BROWSER === "1") {
    throw new Error(`REQUIRE_BROWSER=1 but ${reason}`);
  }
  process.stderr.write(`\n*** BROWSER TESTS SKIPPED: ${reason} ***\n\n`);
  return reason;
}

/**
 * Headless Chromium as root on a machine with no network beyond loopback: no sandbox (root), and
 * none of the background connections that a closed network would refuse.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
