import { readFile } from "node:fs/promises";
import type { Queryable } from "../src/db/database.ts";
import { SUBMISSIONS_SQL } from "../src/submissions/submission-counts.repository.ts";
import { checkpointAfterSeeding } from "./bench-database.ts";
import { runLoad } from "./load-client.ts";
import type { LoadSummary } from "./load-spec.ts";
import { type LoadTarget, type Measurer, ROUNDS } from "./measurement.ts";
import type { BenchOptions } from "./options.ts";
import { addForm, type SubmissionsData, seedSubmissions } from "./seed-submissions.ts";
import { startFormdeckProcess } from "./servers.ts";
import {
  EXACT_LIMIT,
  keepSeries,
  SUBMISSION_SCENARIOS as S,
  type SubmissionFigures,
  submissionsPath,
} from "./submission-scenarios.ts";

const CONNECTIONS = 50;
const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** The stored rows and the count of a form, as the API would read them. */
async function storedAndCounted(db: Queryable, formId: string) {
  const [row] = await db.query<{ stored: number; counted: number }>(
    `SELECT (SELECT count(*)::int FROM submissions WHERE form_id = $1) AS stored,
            ${SUBMISSIONS_SQL} AS counted FROM forms WHERE forms.id = $1`,
    [formId],
  );
  return row ?? { stored: 0, counted: 0 };
}

/** Posts to `formId` from CONNECTIONS clients at once until each has been refused; the answers. */
async function postUntilRefused(origin: string, formId: string): Promise<Record<string, number>> {
  const answers: Record<string, number> = {};
  let sent = 0;
  const client = async () => {
    // A bound, should the limit never close the form: three times the limit in all.
    while (sent++ < EXACT_LIMIT * 3) {
      const response = await fetch(`${origin}/f/${formId}`, {
        method: "POST",
        headers: { accept: "application/json" },
        body: new URLSearchParams({ name: `Ada ${sent}`, message: "Hello" }),
      });
      await response.arrayBuffer();
      answers[response.status] = (answers[response.status] ?? 0) + 1;
      if (response.status !== 201) return;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, client));
  return answers;
}

/**
 * CONNECTIONS clients post to a new form whose limit is EXACT_LIMIT until each is refused:
 * exactly that many are accepted, stored and counted; every other answer is the form's closing.
 */
export async function measureLimitExact(
  db: Queryable,
  formdeck: LoadTarget,
  organizationId: string,
  log: (line: string) => void,
): Promise<NonNullable<SubmissionFigures["limitExact"]>> {
  const formId = await addForm(db, organizationId, {
    limitResponses: true,
    maxResponses: EXACT_LIMIT,
  });
  const { 201: accepted = 0, ...otherAnswers } = await postUntilRefused(
    formdeck.server.origin,
    formId,
  );
  const figures = {
    limit: EXACT_LIMIT,
    accepted,
    ...(await storedAndCounted(db, formId)),
    otherAnswers,
  };
  log(
    `${S.intakeLimitExact}: limit ${EXACT_LIMIT}, ${accepted} accepted, ${figures.stored} ` +
      `stored, ${figures.counted} counted, other answers ${JSON.stringify(otherAnswers)}`,
  );
  return figures;
}

function lineBreaks(chunk: Uint8Array): number {
  let count = 0;
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count++;
  return count;
}

const vmRssMb = async (pid: number) => {
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, "utf8"));
  return Number(kilobytes?.[1]) / 1024;
};

/**
 * The CSV export of the form of `size` submissions, read to its end ROUNDS times, while the
 * server's RSS is sampled every 50 ms: rows per second, and the growth over the RSS the server
 * had before the first round (a server of its own, that has served nothing else: a heap grown by
 * earlier loads would hide what the export takes).
 */
export async function measureExport(
  reader: LoadTarget,
  formId: string,
  size: number,
  log: (line: string) => void,
): Promise<SubmissionFigures["exports"]> {
  const runs: SubmissionFigures["exports"] = [];
  const { pid, origin } = reader.server;
  const before = await vmRssMb(pid);
  for (let round = 1; round <= ROUNDS; round++) {
    let highest = before;
    const sampler = setInterval(() => {
      vmRssMb(pid).then(
        (mb) => {
          highest = Math.max(highest, mb);
        },
        () => {},
      );
    }, 50);
    const startedAt = performance.now();
    let lines = 0;
    try {
      const response = await fetch(`${origin}${submissionsPath(formId, "/export?format=csv")}`, {
        headers: reader.headers,
      });
      if (response.status !== 200 || !response.body) {
        throw new Error(`export answered ${response.status}: ${await response.text()}`);
      }
      for await (const chunk of response.body) lines += lineBreaks(chunk);
    } finally {
      clearInterval(sampler);
    }
    const elapsed = performance.now() - startedAt;
    highest = Math.max(highest, await vmRssMb(pid));
    // The header's line and one per row (the seeded answers hold no line breaks).
    if (lines - 1 !== size) throw new Error(`export: ${lines - 1} rows, ${size} expected`);
    const run = {
      rows: size,
      seconds: elapsed / 1000,
      rowsPerSecond: Math.round(size / (elapsed / 1000)),
      rssGrowthMb: highest - before,
    };
    log(
      `${S.exportCsv} (round ${round}): ${size} rows in ${seconds(elapsed)} s, ` +
        `${run.rowsPerSecond} rows/s, RSS +${run.rssGrowthMb.toFixed(1)} MB`,
    );
    runs.push(run);
  }
  return runs;
}

/**
 * Intake spread over the 100 forms on a formdeck server started just after `size` expired
 * submissions were stored: its retention pass, which runs at start, sweeps them during the
 * first run. Once the sweep is done the same run again, without it. ROUNDS rounds, a new server
 * and new expired rows each. Returns, per round, whether the sweep outlasted the run during it
 * (if not, part of that run met no sweep and flatters it).
 */
export async function measureRetention(
  context: {
    db: Queryable;
    databaseUrl: string;
    options: BenchOptions;
    measurer: Measurer;
    log: (line: string) => void;
  },
  seeded: SubmissionsData,
  size: number,
): Promise<boolean[]> {
  const { db, databaseUrl, options, measurer, log } = context;
  const { durationSeconds, warmupSeconds } = options;
  const during: LoadSummary[] = [];
  const after: LoadSummary[] = [];
  const outlasted: boolean[] = [];
  const expiredId = await addForm(db, seeded.organizationId, { submissionStorageDuration: "30" });
  const expiredLeft = async () => (await storedAndCounted(db, expiredId)).stored;
  for (let round = 1; round <= ROUNDS; round++) {
    await seedSubmissions(db, expiredId, size, { ageDays: 60 });
    await db.query("VACUUM ANALYZE submissions");
    await checkpointAfterSeeding(db, log);
    const server = await startFormdeckProcess("formdeck", "src/server.ts", {
      DATABASE_URL: databaseUrl,
    });
    try {
      const run = () =>
        runLoad({
          origin: server.origin,
          headers: {},
          connections: CONNECTIONS,
          durationSeconds,
          warmupSeconds,
          request: { kind: "intake", formIds: seeded.spreadIds },
        });
      const sweepStart = performance.now();
      // The pass first walks the forms to find the expired one (about 10 s over a million
      // forms): the run starts once it deletes, so that it meets the deletes, not the walk.
      while ((await expiredLeft()) === size) {
        if (performance.now() - sweepStart > 300_000) {
          throw new Error("retention: the pass deleted nothing within 5 minutes of its start");
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      during.push(await run());
      const left = await expiredLeft();
      outlasted.push(left > 0);
      while ((await expiredLeft()) > 0) await new Promise((r) => setTimeout(r, 500));
      log(
        `retention (round ${round}): ${size} expired submissions swept in ` +
          `${seconds(performance.now() - sweepStart)} s or less; ${left} were left when the ` +
          `run during the sweep ended`,
      );
      after.push(await run());
      for (const [name, summary] of [
        [S.intakeDuringRetention, during.at(-1)],
        [S.intakeBesideRetention, after.at(-1)],
      ] as const) {
        log(
          `${name} (round ${round}): ${summary?.requestsPerSecond} req/s, ` +
            `p99 ${summary?.latencyMs?.p99} ms, ${summary?.non2xx} non-2xx`,
        );
      }
    } finally {
      await server.stop();
    }
  }
  keepSeries(measurer, S.intakeDuringRetention, null, "formdeck", during, CONNECTIONS);
  keepSeries(measurer, S.intakeBesideRetention, null, "formdeck", after, CONNECTIONS);
  return outlasted;
}
