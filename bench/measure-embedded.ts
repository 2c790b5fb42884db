import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JsonCommand } from "../src/admin/admin-commands.ts";
import { sendAdminCommand } from "../src/admin/admin-socket-client.ts";
import { adminSocketPath } from "../src/admin/admin-socket-protocol.ts";
import { organizationName } from "./bench-organizations.ts";
import { FORMS_PATH } from "./load-spec.ts";
import { apiKeyHeader, type Measurer } from "./measurement.ts";
import type { BenchOptions } from "./options.ts";
import { listPath, SCENARIOS } from "./scenarios.ts";
import { RARE_WORD, RARE_WORD_FORMS } from "./seed-forms.ts";
import { peakRssMb, type RunningServer, startEmbeddedFormdeck } from "./servers.ts";
import { measureStoreCreation } from "./store-creation.ts";

/** Seeding a million forms through the API would take hours: the embedded store gets 10,000 at most. */
const LARGEST_EMBEDDED_SIZE = 10_000;
/** Creates in flight while seeding. */
const SEEDING_CONNECTIONS = 20;

const EMBEDDED_SCENARIOS = [SCENARIOS.listDefaults, SCENARIOS.listSearch, SCENARIOS.create];

export interface EmbeddedMemory {
  /**
   * Peak RSS of the process that started on a new DATA_DIR (initdb and migrations), took the
   * organization's key through its admin socket and the forms through the API.
   */
  firstStartMb: number;
  /** Peak RSS of the same store restarted, through the list, search and create loads. */
  restartMb: number;
  /**
   * The process a first start runs once to create the store (src/db/pglite-initdb.ts), measured
   * alone: its peak RSS and seconds.
   */
  creation: { peakRssMb: number; seconds: number };
}

/** What the CLI does while a server holds the store: the command goes to its admin socket. */
async function adminCommand(dataDir: string, command: JsonCommand) {
  const reply = await sendAdminCommand(adminSocketPath(dataDir), command);
  if (reply.kind !== "result") throw new Error("the embedded server's admin socket did not answer");
  return reply.result as unknown as { id: string; key: string };
}

/**
 * A paid organization named `name` and a full key of it, created through the embedded server's
 * admin socket (the store is the server's alone): resolves to the key.
 */
export async function embeddedTenant(dataDir: string, name: string): Promise<string> {
  const org = await adminCommand(dataDir, { type: "org.create", name, plan: "paid" });
  const { key } = await adminCommand(dataDir, {
    type: "key.create",
    organizationId: org.id,
    scope: "full",
    name: "bench",
  });
  return key;
}

/** `count` forms created through the API, RARE_WORD_FORMS of them named with the rare word. */
async function seedThroughApi(server: RunningServer, key: string, count: number) {
  let next = 0;
  const createNext = async (): Promise<void> => {
    while (next < count) {
      const n = next++;
      const rare = n % Math.floor(count / RARE_WORD_FORMS) === 0;
      const response = await fetch(`${server.origin}${FORMS_PATH}`, {
        method: "POST",
        headers: { ...apiKeyHeader(key), "content-type": "application/json" },
        body: JSON.stringify({
          name: rare ? `Zephyr contact form ${n}` : `Contact form ${n}`,
          type: n % 10 < 3 ? "hosted" : "endpoint",
        }),
      });
      if (response.status !== 201) throw new Error(`seeding: create answered ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: SEEDING_CONNECTIONS }, createNext));
}

/**
 * formdeck on the embedded store (PGlite), as a newcomer runs it: a server process that starts on
 * an empty DATA_DIR (initdb and migrations included), an organization and a key made through its
 * admin socket as the CLI makes them, the forms created through the API; then the same store
 * restarted, under the list, search and create loads. Null when no embedded scenario was selected.
 */
export async function measureOnEmbeddedStore(
  options: BenchOptions,
  measurer: Measurer,
  log: (line: string) => void,
): Promise<EmbeddedMemory | null> {
  const size = options.sizes.filter((forms) => forms <= LARGEST_EMBEDDED_SIZE).at(-1);
  if (size === undefined || !EMBEDDED_SCENARIOS.some(measurer.selects)) return null;
  const creation = await measureStoreCreation();
  log(
    `embedded store: created alone in ${creation.seconds.toFixed(1)} s, ` +
      `peak RSS ${creation.peakRssMb.toFixed(0)} MB`,
  );
  const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-bench-"));
  try {
    const started = performance.now();
    const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
    let key: string;
    let firstStartMb: number;
    const firstServer = await startEmbeddedFormdeck(dataDir);
    try {
      log(
        `embedded store: first start in ${seconds(started)} s, ` +
          `peak RSS ${(await peakRssMb(firstServer)).toFixed(0)} MB`,
      );
      key = await embeddedTenant(dataDir, organizationName(size));
      const seeding = performance.now();
      await seedThroughApi(firstServer, key, size);
      firstStartMb = await peakRssMb(firstServer);
      log(`embedded store: ${size} forms created through the API in ${seconds(seeding)} s`);
    } finally {
      await firstServer.stop();
    }
    const server = await startEmbeddedFormdeck(dataDir);
    try {
      const target = { server, headers: apiKeyHeader(key) };
      const list = (scenario: string, path: string) => ({
        scenario,
        forms: size,
        target,
        request: { kind: "get", path } as const,
      });
      await measurer.measure(list(SCENARIOS.listDefaults, listPath("")));
      await measurer.measure(list(SCENARIOS.listSearch, listPath(`?search=${RARE_WORD}`)));
      await measurer.measure({
        scenario: SCENARIOS.create,
        forms: size,
        target,
        request: { kind: "create" },
      });
      return { firstStartMb, restartMb: await peakRssMb(server), creation };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
