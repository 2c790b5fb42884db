/**
 * Uploads (issue 11): intake of a 1 MB PNG re-encoded at 20 connections, memory while 50
 * clients upload 10 MB files, a forms list during that burst against idle, and file downloads
 * against a plain node:http handler reading the same bytes from the store.
 * `node bench/uploads.ts` (embedded store) or with DATABASE_URL; prints one table.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { createApiKey, createOrganization } from "../src/admin/admin.service.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import { createRateLimiter } from "../src/rate-limit/create-rate-limiter.ts";
import {
  eventsWithoutQueue,
  headerCountries,
  TokenCaptcha,
} from "../test/intake/test-implementations.ts";

const BOUNDARY = "BenchBoundary";
const multipart = (name: string, content: Buffer) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`,
    ),
    content,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);

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

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 50);

const config = { ...loadConfig({}), intakeRateLimitMax: 1_000_000, rateLimitMax: 1_000_000 };
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: null });
await migrate(db);
const limiter = createRateLimiter({ redisUrl: null, windowSeconds: 60, log: console });
const app = await buildApp({
  config,
  db,
  limiter,
  intake: {
    limiter,
    captcha: new TokenCaptcha(),
    countries: headerCountries,
    events: eventsWithoutQueue(config),
  },
});
const base = await app.listen({ port: 0, host: "127.0.0.1" });
const org = await createOrganization(db, { name: "bench uploads", plan: "paid" });
const { key } = await createApiKey(db, { organizationId: org.id, scope: "full", name: "bench" });
const headers = { "api-key": key, "content-type": "application/json" };
const created = await fetch(`${base}/api/v1/forms`, {
  method: "POST",
  headers,
  body: JSON.stringify({ name: "uploads", imageCompressionType: ["png"] }),
});
const formId = ((await created.json()) as { id: string }).id;
const post = (body: Buffer) =>
  fetch(`${base}/f/${formId}`, {
    method: "POST",
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body,
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
const listForms = () =>
  fetch(`${base}/api/v1/forms`, { headers: { "api-key": key } }).then((res) => res.arrayBuffer());

const rows: [string, string][] = [];

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
const pngBody = multipart("photo.png", png);
const intake = await load(200, 20, () => post(pngBody));
rows.push(
  [
    `PNG of ${(png.length / 1e6).toFixed(2)} MB re-encoded, 20 connections`,
    `${(200 / intake.seconds).toFixed(1)} uploads/s, p99 ${percentile(intake.times, 0.99).toFixed(0)} ms`,
  ],
  ["peak RSS so far", `${(peakRss / 1e6).toFixed(0)} MB`],
);

const idle = await load(200, 5, listForms);
peakRss = process.memoryUsage.rss();
const bigBody = multipart("big.txt", Buffer.alloc(10_000_000, "a"));
const burst = Promise.all(Array.from({ length: 50 }, () => post(bigBody)));
const during = await load(200, 5, listForms);
const statuses = await burst;
rows.push(
  ["forms list p99, idle", `${percentile(idle.times, 0.99).toFixed(1)} ms`],
  ["forms list p99, during 50 × 10 MB uploads", `${percentile(during.times, 0.99).toFixed(1)} ms`],
  [
    "50 × 10 MB uploads",
    `${statuses.filter((s) => s === 201).length} stored, ${statuses.filter((s) => s === 503).length} refused 503; peak RSS ${(peakRss / 1e6).toFixed(0)} MB`,
  ],
);

const [file] = await db.query<{ id: string; submissionId: string }>(
  `SELECT sf.id, sf.submission_id AS "submissionId" FROM submission_files sf
     JOIN submissions s ON s.id = sf.submission_id
    WHERE s.form_id = $1 AND octet_length(sf.content) = 10000000 LIMIT 1`,
  [formId],
);
if (file) {
  const plain = createServer(async (_request, response) => {
    const [row] = await db.query<{ content: string }>(
      "SELECT encode(content, 'base64') AS content FROM submission_files WHERE id = $1",
      [file.id],
    );
    response.end(Buffer.from(row?.content ?? "", "base64"));
  });
  plain.listen(0, "127.0.0.1");
  await new Promise((resolve) => plain.once("listening", resolve));
  const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/`;
  const apiUrl = `${base}/api/v1/forms/${formId}/submissions/${file.submissionId}/files/${file.id}`;
  const fetchAll = (url: string, init?: RequestInit) => () =>
    fetch(url, init).then((res) => res.arrayBuffer());
  const ours = await load(40, 4, fetchAll(apiUrl, { headers: { "api-key": key } }));
  const theirs = await load(40, 4, fetchAll(plainUrl));
  const mbps = (run: { seconds: number }) => (40 * 10) / run.seconds;
  rows.push([
    "10 MB downloads, 4 connections",
    `${mbps(ours).toFixed(0)} MB/s against ${mbps(theirs).toFixed(0)} MB/s plain (${(mbps(ours) / mbps(theirs)).toFixed(2)}x)`,
  ]);
  plain.close();
}

clearInterval(sampler);
console.log(`store: ${db.kind}`);
for (const [what, figure] of rows) console.log(`| ${what} | ${figure} |`);
await app.close();
await limiter.close();
await db.close();
