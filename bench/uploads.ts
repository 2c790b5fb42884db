/**
 * Uploads (issue 11), on PostgreSQL: intake of a PNG re-encoded at 20 connections, the server's
 * memory while 50 clients upload 10 MB files, a forms list during that burst against idle, and
 * file downloads against a plain node:http handler reading the same bytes from the store.
 * formdeck runs as `npm start` runs it, in a process of its own, so that its peak RSS is the
 * server's alone; the clients run here. `node bench/uploads.ts` (BENCH_DATABASE_URL, default the
 * bench's own database); prints one table.
 */
import { spawn } from "node:child_process";
import sharp from "sharp";
import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import { DEFAULT_BENCH_DATABASE_URL, ensureDatabaseExists } from "./bench-database.ts";
import { peakRssMb, startFormdeck, startServer } from "./servers.ts";
import { multipartFile, postUpload } from "./upload-requests.ts";

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ??
  0;

/** Runs `total` calls of `call`, `connections` at a time; each call's milliseconds. */
async function load(total: number, connections: number, call: () => Promise<unknown>) {
  const times: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next++ < total) {
      const started = performance.now();
      await call();
      times.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  return { times, seconds: (performance.now() - started) / 1000 };
}

const databaseUrl = process.env.BENCH_DATABASE_URL || DEFAULT_BENCH_DATABASE_URL;
await ensureDatabaseExists(databaseUrl);
const db = await openDatabase({ databaseUrl, dataDir: null });
await migrate(db);
const server = await startFormdeck(databaseUrl);
const base = server.origin;
const org = await createOrganization(db, { name: "bench uploads", plan: "paid" });
const { key } = await createApiKey(db, { organizationId: org.id, scope: "full", name: "bench" });
const created = await fetch(`${base}/api/v1/forms`, {
  method: "POST",
  headers: { "api-key": key, "content-type": "application/json" },
  body: JSON.stringify({ name: "uploads", imageCompressionType: ["png"] }),
});
const formId = ((await created.json()) as { id: string }).id;
const listForms = () =>
  fetch(`${base}/api/v1/forms`, { headers: { "api-key": key } }).then((res) => res.arrayBuffer());

const rows: [string, string][] = [];

/**
 * Times forms lists, 5 at a time, for as long as 50 clients upload 10 MB files at once from
 * another process (bench/upload-burst.ts): from its first request to its last answer.
 */
async function listsDuringBurst() {
  const burst = spawn(process.execPath, ["bench/upload-burst.ts", base, formId], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const started = new Promise<void>((resolve) =>
    burst.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("sending\n")) resolve();
    }),
  );
  const ended = new Promise<void>((resolve) => burst.on("close", () => resolve()));
  await started;
  let over = false;
  void ended.then(() => {
    over = true;
  });
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: 5 }, async () => {
      while (!over) {
        const requested = performance.now();
        await listForms();
        times.push(performance.now() - requested);
      }
    }),
  );
  await ended;
  const statuses = JSON.parse(output.slice(output.indexOf("\n") + 1)) as Record<string, number>;
  return { times, statuses };
}
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

const png = await sharp({
  create: {
    width: 600,
    height: 420,
    channels: 3,
    background: "#888",
    noise: { type: "gaussian", mean: 128, sigma: 40 },
  },
})
  .png()
  .toBuffer();
const pngBody = multipartFile("photo.png", png);
const intake = await load(200, 20, () => postUpload(base, formId, pngBody));
rows.push([
  `PNG of ${megabytes(png.length)} re-encoded, 20 connections`,
  `${(200 / intake.seconds).toFixed(1)} uploads/s, p99 ${percentile(intake.times, 0.99).toFixed(0)} ms; server peak RSS ${(await peakRssMb(server)).toFixed(0)} MB`,
]);

await load(200, 5, listForms); // warm-up: the list's code compiled before it is timed
const idle = await load(400, 5, listForms);
const { times: duringTimes, statuses } = await listsDuringBurst();
const during = { times: duringTimes };
const idleP99 = percentile(idle.times, 0.99);
const duringP99 = percentile(during.times, 0.99);
rows.push(
  ["forms list p99, idle", `${idleP99.toFixed(1)} ms`],
  [
    "forms list p99, during 50 × 10 MB uploads (sent by another process)",
    `${duringP99.toFixed(1)} ms (${(duringP99 / idleP99).toFixed(2)}× idle; ${during.times.length} lists)`,
  ],
  [
    "50 × 10 MB uploads at once",
    `${statuses["201"] ?? 0} stored, ${statuses["503"] ?? 0} refused 503; server peak RSS ${(await peakRssMb(server)).toFixed(0)} MB`,
  ],
);

const [file] = await db.query<{ id: string; submissionId: string }>(
  `SELECT sf.id, sf.submission_id AS "submissionId" FROM submission_files sf
     JOIN submissions s ON s.id = sf.submission_id
    WHERE s.form_id = $1 AND sf.size = 10000000 LIMIT 1`,
  [formId],
);
if (file) {
  const plain = await startServer("minimal handler", "bench/servers/plain-file.ts", {
    DATABASE_URL: databaseUrl,
    BENCH_FILE_ID: file.id,
  });
  const apiUrl = `${base}/api/v1/forms/${formId}/submissions/${file.submissionId}/files/${file.id}`;
  const fetchAll = (url: string, init?: RequestInit) => () =>
    fetch(url, init).then((res) => res.arrayBuffer());
  // Alternating rounds, so that both meet the same noise; the median round of each.
  const ours: number[] = [];
  const theirs: number[] = [];
  const mbps = (run: { seconds: number }) => (40 * 10) / run.seconds;
  for (let round = 0; round < 3; round++) {
    ours.push(mbps(await load(40, 4, fetchAll(apiUrl, { headers: { "api-key": key } }))));
    theirs.push(mbps(await load(40, 4, fetchAll(plain.origin))));
  }
  const median = (values: number[]) => values.toSorted((a, b) => a - b)[1] as number;
  rows.push([
    "10 MB downloads, 4 connections (medians of 3 alternating rounds)",
    `${median(ours).toFixed(0)} MB/s against ${median(theirs).toFixed(0)} MB/s plain (${(median(ours) / median(theirs)).toFixed(2)}×); server peak RSS ${(await peakRssMb(server)).toFixed(0)} MB`,
  ]);
  await plain.stop();
}

await server.stop();
await db.close();
console.log(`store: PostgreSQL; server: formdeck as npm start runs it, in its own process`);
for (const [what, figure] of rows) console.log(`| ${what} | ${figure} |`);
