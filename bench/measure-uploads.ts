import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import type { Queryable } from "../src/db/database.ts";
import { embeddedTenant } from "./measure-embedded.ts";
import type { PostgresData } from "./measure-postgres.ts";
import { ROUNDS } from "./measurement.ts";
import { peakRssMb, startEmbeddedFormdeck, startFormdeck, startServer } from "./servers.ts";
import { multipartFile, postUpload } from "./upload-requests.ts";
import { percentile, timedCalls, timedFor, uploadBurst } from "./upload-timing.ts";

/** The uploads scenarios (issue 11); `--only uploads` selects them. */
export const UPLOADS = "uploads";

export interface UploadFigures {
  /** A PNG re-encoded (`imageCompressionType: ["png"]`), 20 connections. */
  intake: { pngBytes: number; uploadsPerSecond: number; p99Ms: number; peakRssMb: number } | null;
  /** Per round: forms lists timed idle, then during a burst of 50 × 10 MB uploads. */
  burstRounds: {
    idleP99Ms: number;
    duringP99Ms: number;
    idleLists: number;
    lists: number;
    stored: number;
    refused: number;
  }[];
  /** VmHWM of the PostgreSQL server after its bursts, in MB. */
  burstPeakRssMb: number | null;
  /** The same burst on the embedded store, its server in a process of its own. */
  embeddedBurst: { stored: number; refused: number; peakRssMb: number } | null;
  /** Per round, taking turns: 10 MB downloads, 4 connections, formdeck then the plain handler. */
  downloadRounds: { formdeckMbps: number; plainMbps: number }[];
}

export const emptyUploadFigures = (): UploadFigures => ({
  intake: null,
  burstRounds: [],
  burstPeakRssMb: null,
  embeddedBurst: null,
  downloadRounds: [],
});

/** How long forms lists are timed idle before each burst. */
export const IDLE_SECONDS = 10;
const DOWNLOADS_PER_RUN = 40;
const FILE_MB = 10;

/** A PNG of about 1 MB: noise, which PNG cannot compress away. */
const noisyPng = () =>
  sharp({
    create: {
      width: 700,
      height: 500,
      channels: 3,
      background: "#888",
      noise: { type: "gaussian", mean: 128, sigma: 40 },
    },
  })
    .png()
    .toBuffer();

async function createForm(origin: string, key: string) {
  const created = await fetch(`${origin}/api/v1/forms`, {
    method: "POST",
    headers: { "api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name: "uploads", imageCompressionType: ["png"] }),
  });
  if (created.status !== 201) throw new Error(`uploads form: create answered ${created.status}`);
  return ((await created.json()) as { id: string }).id;
}

/** A 10 MB file the bursts stored: the one the downloads read. */
async function storedBurstFile(db: Queryable, formId: string) {
  const [file] = await db.query<{ id: string; submissionId: string }>(
    `SELECT sf.id, sf.submission_id AS "submissionId" FROM submission_files sf
       JOIN submissions s ON s.id = sf.submission_id
      WHERE s.form_id = $1 AND sf.size = $2 LIMIT 1`,
    [formId, FILE_MB * 1_000_000],
  );
  return file;
}

/**
 * Uploads on PostgreSQL, formdeck in a process of its own as `npm start` runs it, so that its
 * peak RSS is the server's alone: PNG intake with re-encoding; rounds of forms lists idle then
 * during a burst of 50 × 10 MB uploads; rounds of 10 MB downloads taking turns with a plain
 * `node:http` handler reading the same slices; then the burst on the embedded store.
 */
export async function measureUploads(
  { databaseUrl, db }: PostgresData,
  selects: (scenario: string) => boolean,
  log: (line: string) => void,
): Promise<UploadFigures> {
  const figures = emptyUploadFigures();
  if (!selects(UPLOADS)) return figures;
  const organization = await createOrganization(db, { name: "bench uploads", plan: "paid" });
  const { key } = await createApiKey(db, {
    organizationId: organization.id,
    scope: "full",
    name: "bench uploads",
  });
  const server = await startFormdeck(databaseUrl);
  try {
    const formId = await createForm(server.origin, key);
    const listForms = () =>
      fetch(`${server.origin}/api/v1/forms`, { headers: { "api-key": key } }).then((res) =>
        res.arrayBuffer(),
      );

    const png = await noisyPng();
    const pngBody = multipartFile("photo.png", png);
    const intake = await timedCalls(200, 20, () => postUpload(server.origin, formId, pngBody));
    figures.intake = {
      pngBytes: png.length,
      uploadsPerSecond: 200 / intake.seconds,
      p99Ms: percentile(intake.times, 0.99),
      peakRssMb: await peakRssMb(server),
    };
    log(`uploads: PNG intake ${figures.intake.uploadsPerSecond.toFixed(1)}/s`);

    await timedCalls(200, 5, listForms); // warm-up: the list's code compiled before it is timed
    for (let round = 1; round <= ROUNDS; round++) {
      const idle = await timedFor(IDLE_SECONDS, 5, listForms);
      const burst = await uploadBurst(server.origin, formId, listForms);
      const row = {
        idleP99Ms: percentile(idle, 0.99),
        duringP99Ms: percentile(burst.times, 0.99),
        idleLists: idle.length,
        lists: burst.times.length,
        stored: burst.stored,
        refused: burst.refused,
      };
      figures.burstRounds.push(row);
      log(
        `uploads: burst round ${round}: list p99 ${row.idleP99Ms.toFixed(1)} ms idle, ` +
          `${row.duringP99Ms.toFixed(1)} ms during; ${row.stored} stored, ${row.refused} refused`,
      );
    }
    figures.burstPeakRssMb = await peakRssMb(server);

    const file = await storedBurstFile(db, formId);
    if (file) {
      const plain = await startServer("minimal handler", "bench/servers/plain-file.ts", {
        DATABASE_URL: databaseUrl,
        BENCH_FILE_ID: file.id,
      });
      try {
        const apiUrl = `${server.origin}/api/v1/forms/${formId}/submissions/${file.submissionId}/files/${file.id}`;
        const download = (url: string, headers: Record<string, string>) => async () => {
          const body = await (await fetch(url, { headers })).arrayBuffer();
          if (body.byteLength !== FILE_MB * 1_000_000) throw new Error(`download: ${url} short`);
        };
        const ours = download(apiUrl, { "api-key": key });
        const theirs = download(plain.origin, {});
        await timedCalls(8, 4, ours);
        await timedCalls(8, 4, theirs);
        const mbps = async (call: () => Promise<void>) =>
          (DOWNLOADS_PER_RUN * FILE_MB) / (await timedCalls(DOWNLOADS_PER_RUN, 4, call)).seconds;
        for (let round = 1; round <= ROUNDS; round++) {
          const row = { formdeckMbps: await mbps(ours), plainMbps: await mbps(theirs) };
          figures.downloadRounds.push(row);
          log(
            `uploads: downloads round ${round}: ${row.formdeckMbps.toFixed(0)} MB/s, ` +
              `plain ${row.plainMbps.toFixed(0)} MB/s`,
          );
        }
      } finally {
        await plain.stop();
      }
    }
  } finally {
    await server.stop();
  }
  figures.embeddedBurst = await embeddedBurst();
  log(`uploads: embedded burst peak RSS ${figures.embeddedBurst.peakRssMb.toFixed(0)} MB`);
  return figures;
}

/** The burst of 50 × 10 MB uploads on the embedded store, in a server process of its own. */
async function embeddedBurst(): Promise<NonNullable<UploadFigures["embeddedBurst"]>> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "formdeck-bench-uploads-"));
  try {
    const server = await startEmbeddedFormdeck(dataDir);
    try {
      const key = await embeddedTenant(dataDir, "bench uploads");
      const formId = await createForm(server.origin, key);
      const { stored, refused } = await uploadBurst(server.origin, formId);
      return { stored, refused, peakRssMb: await peakRssMb(server) };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
