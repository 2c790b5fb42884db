import path from "node:path";

/**
 * The environment of a shell where a newcomer types `npm start`: no npm run-script variables,
 * and no node_modules/.bin on PATH, so that `npm` runs on the system's Node as it would there.
 */
export function newcomerEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^npm_/i.test(name)) env[name] = value;
  }
  env.PATH = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !dir.includes(`node_modules${path.sep}.bin`))
    .join(path.delimiter);
  return { ...env, ...extra };
}

/** The lines of `stderr` that are this machine's npm configuration's, not the project's. */
export const withoutMachineNoise = (stderr: string) =>
  stderr.split("\n").filter((line) => line !== "" && !line.includes('config "nodedir"'));
