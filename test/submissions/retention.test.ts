import assert from "node:assert/strict";
import { test } from "node:test";
import {
  EXPIRED_BATCH,
  EXPIRED_FORMS_SCAN,
  scanForExpiredSubmissions,
} from "../../src/submissions/retention.repository.ts";
import { deleteExpiredSubmissions } from "../../src/submissions/retention.ts";
import { startRetentionSweep } from "../../src/submissions/retention-sweep.ts";
import { client, sleep } from "../forms/form-fixtures.ts";
import { createTenant, useTestApp } from "../helpers.ts";
import {
  daysAgo,
  type SeedSpec,
  seedSubmissions,
  storedCounter,
  storedIds,
  submissionsClient,
} from "./submission-fixtures.ts";

const built = useTestApp();

const HOUR = 3_600_000;
/** Just inside and just outside `days`, an hour either side. */
const younger = (days: number, now: Date) => new Date(daysAgo(days, now).getTime() + HOUR);
const older = (days: number, now: Date) => new Date(daysAgo(days, now).getTime() - HOUR);

async function formWith(duration: string) {
  const { fullKey } = await createTenant();
  const form = await client(built.app, fullKey).createOk({
    name: `keeps ${duration}`,
    submissionStorageDuration: duration,
  });
  return { form, fullKey };
}

test("each storage duration deletes what is older and keeps the rest; spam goes after 30 days", async () => {
  const now = new Date();
  const cases = [
    { duration: "30", days: 30 },
    { duration: "60", days: 60 },
    { duration: "90", days: 90 },
    { duration: "365", days: 365 },
    { duration: "forever", days: null },
    { duration: "never", days: 0 },
  ];
  const expectations = [];
  for (const { duration, days } of cases) {
    const { form, fullKey } = await formWith(duration);
    const specs: SeedSpec[] = [
      { isSpam: true, createdAt: younger(30, now) },
      { isSpam: true, createdAt: older(30, now) },
      // `never` keeps nothing: even a submission from an hour ago goes.
      { createdAt: days === 0 ? older(0, now) : younger(days ?? 3650, now) },
      { createdAt: older(days ?? 3650, now) },
      { createdAt: daysAgo(10_000, now) },
    ];
    const rows = await seedSubmissions(built.db, form, specs);
    const kept = rows.filter((row, index) => {
      if (row.isSpam) return index === 0 && days !== 0;
      if (days === null) return true;
      return index === 2 && days !== 0;
    });
    expectations.push({ form, fullKey, kept });
  }
  const deleted = await deleteExpiredSubmissions(built.db, now, { batchSize: 2 });
  // 30, 60, 90, 365: spam, older, very old; forever: spam; never: everything.
  assert.ok(deleted >= 4 * 3 + 1 + 5, `deleted ${deleted}`);
  for (const { form, fullKey, kept } of expectations) {
    // In the order storedIds reads them: oldest first, then by id.
    const expected = kept.sort(
      (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1),
    );
    assert.deepEqual(
      await storedIds(built.db, form.id),
      expected.map((row) => row.id),
      form.submissionStorageDuration,
    );
    // The kept counts follow; the form's counter counts what was accepted, deleted or not.
    const api = submissionsClient(built.app, fullKey);
    const meta = (await api.listOk(form.id)).meta;
    assert.deepEqual(meta, {
      total: expected.filter((row) => !row.isSpam).length,
      totalInbox: expected.filter((row) => !row.isSpam).length,
      totalSpam: expected.filter((row) => row.isSpam).length,
    });
    assert.equal(await storedCounter(built.db, form.id), 0);
  }
});

test("a shorter duration applies to existing submissions at the next pass", async () => {
  const now = new Date();
  const { form, fullKey } = await formWith("365");
  const [old, recent] = await seedSubmissions(built.db, form, [
    { createdAt: daysAgo(100, now) },
    { createdAt: daysAgo(5, now) },
  ]);
  await deleteExpiredSubmissions(built.db, now);
  assert.deepEqual(await storedIds(built.db, form.id), [old?.id, recent?.id]);
  await client(built.app, fullKey).updateOk(form.id, { submissionStorageDuration: "90" });
  await deleteExpiredSubmissions(built.db, now);
  assert.deepEqual(await storedIds(built.db, form.id), [recent?.id]);
});

test("passes running at once delete each expired submission once, in batches", async () => {
  const now = new Date();
  const { form } = await formWith("30");
  const specs = Array.from({ length: 25 }, (_, i) => ({ createdAt: daysAgo(31 + i, now) }));
  const [keep] = await seedSubmissions(built.db, form, [{ createdAt: daysAgo(1, now) }]);
  await seedSubmissions(built.db, form, specs);
  const passes = await Promise.all(
    [3, 4, 5].map((batchSize) => deleteExpiredSubmissions(built.db, now, { batchSize })),
  );
  assert.ok(passes.reduce((sum, n) => sum + n, 0) >= 25, `deleted ${passes.join(" + ")}`);
  assert.deepEqual(await storedIds(built.db, form.id), [keep?.id]);
});

test("the background pass runs at start and stops when asked", async () => {
  const { form } = await formWith("30");
  const [expired] = await seedSubmissions(built.db, form, [{ createdAt: daysAgo(45) }]);
  assert.deepEqual(await storedIds(built.db, form.id), [expired?.id]);
  const silent = { info() {}, warn() {} } as unknown as Parameters<typeof startRetentionSweep>[2];
  // An interval far longer than the test: only the pass at start can delete it.
  const sweep = startRetentionSweep(built.db, 3_600_000, silent);
  for (let tries = 0; tries < 200 && (await storedIds(built.db, form.id)).length > 0; tries++) {
    await sleep(25);
  }
  await sweep.stop();
  assert.deepEqual(await storedIds(built.db, form.id), []);
});

test("a scan looks at a window of forms, expired or not; a pass walks every window", async () => {
  const now = new Date();
  const { form: expired } = await formWith("30");
  const { form: fresh } = await formWith("30");
  const [old] = await seedSubmissions(built.db, expired, [{ createdAt: daysAgo(45, now) }]);
  const [recent] = await seedSubmissions(built.db, fresh, [{ createdAt: daysAgo(5, now) }]);
  const [counted] = await built.db.query<{ forms: number }>(
    "SELECT count(*)::int AS forms FROM forms",
  );
  const forms = counted?.forms ?? 0;
  const scanned = await scanForExpiredSubmissions(built.db, now, "", forms);
  assert.equal(scanned.length, forms, "every form in the window, whatever it holds");
  assert.equal(scanned.find((row) => row.id === expired.id)?.expired, true);
  assert.equal(scanned.find((row) => row.id === fresh.id)?.expired, false);
  // A window of a fifth of the forms: the pass takes about five scans to reach them all.
  await deleteExpiredSubmissions(built.db, now, { formsPerScan: Math.ceil(forms / 5) });
  assert.deepEqual(await storedIds(built.db, expired.id), []);
  assert.deepEqual(await storedIds(built.db, fresh.id), [recent?.id]);
  assert.ok(old);
});

/** The kinds of scan of every node of an `EXPLAIN (FORMAT JSON)` plan that reads `relation`. */
function scansOf(plan: unknown, relation: string): string[] {
  const node = plan as { "Node Type": string; "Relation Name"?: string; Plans?: unknown[] };
  const own = node["Relation Name"] === relation ? [node["Node Type"]] : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => scansOf(child, relation))];
}

test("a form of many submissions is scanned and swept along its index, never by reading every submission", async () => {
  const now = new Date();
  const { form } = await formWith("30");
  // Enough recent submissions in one form for PostgreSQL to weigh a sequential scan.
  await built.db.query(
    `INSERT INTO submissions (id, form_id, organization_id, is_spam, answers, search_text, meta,
                              created_at, updated_at)
     SELECT 'sub_many_' || n || '_' || $1, $1, $2, false, '[]', '', '{}',
            $3::timestamptz - n * interval '1 second', $3::timestamptz
       FROM generate_series(1, 20000) AS n`,
    [form.id, form.organizationId, now],
  );
  await built.db.query("ANALYZE submissions");
  const statements = [
    { name: "the scan", sql: EXPIRED_FORMS_SCAN, params: [now, "", 100_000] },
    { name: "a batch", sql: EXPIRED_BATCH, params: [now, form.id, false, 1_000] },
  ];
  for (const { name, sql, params } of statements) {
    const [row] = await built.db.query<{ "QUERY PLAN": [{ Plan: unknown }] }>(
      `EXPLAIN (FORMAT JSON) ${sql}`,
      params,
    );
    const scans = scansOf(row?.["QUERY PLAN"][0].Plan, "submissions");
    assert.ok(scans.length > 0, `${name} reads submissions`);
    assert.ok(!scans.includes("Seq Scan"), `${name}: ${scans.join(", ")}`);
  }
  await deleteExpiredSubmissions(built.db, now);
  assert.equal((await storedIds(built.db, form.id)).length, 20_000, "none of them expired");
});
