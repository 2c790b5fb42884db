import { rm } from "node:fs/promises";
import { tempDataDir } from "../../server/server-process.ts";
import { startThrowawayPostgres, throwawayPostgresUnavailable } from "./throwaway-postgres.ts";

export interface StoreEnv {
  /** For the server and the CLI: DATABASE_URL, or DATA_DIR of a new temporary directory. */
  env: Record<string, string | undefined>;
  name: string;
  /** Removes the temporary directory, if there is one. */
  cleanup(): Promise<void>;
}

/** The store the environment gives: PostgreSQL at DATABASE_URL, else a new embedded store. */
export async function storeFromEnvironment(): Promise<StoreEnv> {
  if (process.env.DATABASE_URL) {
    return {
      env: { DATABASE_URL: process.env.DATABASE_URL },
      name: "PostgreSQL at DATABASE_URL",
      cleanup: async () => {},
    };
  }
  return embeddedStore();
}

/** A new embedded store in a temporary DATA_DIR (DATABASE_URL unset for the server and CLI). */
export async function embeddedStore(): Promise<StoreEnv> {
  const dataDir = await tempDataDir();
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: undefined },
    name: "embedded store (PGlite) in a temporary DATA_DIR",
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/**
 * A PostgreSQL store for tests that need several instances on one store: DATABASE_URL when it
 * is set, else a throwaway cluster. Null when neither is available here.
 */
export async function sharedPostgres(): Promise<StoreEnv | null> {
  if (process.env.DATABASE_URL) return storeFromEnvironment();
  if (throwawayPostgresUnavailable()) return null;
  const cluster = await startThrowawayPostgres();
  return {
    env: { DATABASE_URL: cluster.url },
    name: `a throwaway PostgreSQL cluster (port ${cluster.port}); DATABASE_URL is not set`,
    cleanup: () => cluster.destroy(),
  };
}
