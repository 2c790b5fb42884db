import type { TestContext } from "node:test";

/**
 * Prints one measured figure as `figure <name>: <value>`: as a diagnostic of the test `t` (shown
 * by every reporter under the test) and on stdout (so that it also reaches the runner's output).
 */
export function figure(t: TestContext, name: string, value: string | number) {
  const line = `figure ${name}: ${value}`;
  t.diagnostic(line);
  console.log(line);
}
