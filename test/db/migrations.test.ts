import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { closeTestDatabase, testDatabase } from "../helpers.ts";

const ALL = [
  "001_organizations_keys_forms",
  "002_form_counts_and_name_search",
  "003_idempotency_keys",
  "004_name_search_normalized",
  "005_submissions",
  "006_submission_counts",
  "007_submission_files",
  "008_email_records",
  "009_webhooks",
  "010_file_chunks",
  "015_submission_events_outbox",
  "016_email_records_by_form",
  "017_form_revisions",
  "018_file_chunks_lz4",
];

test("migrations apply once and running them again changes nothing", async () => {
  const db = await openDatabase({ databaseUrl: null, dataDir: null });
  try {
    assert.deepEqual(await migrate(db), ALL);
    assert.deepEqual(await migrate(db), []);
    const tables = await db.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename::text COLLATE \"C\"",
    );
    assert.deepEqual(
      tables.map((t) => t.name),
      [
        "api_keys",
        "email_records",
        "form_counts",
        "forms",
        "idempotency_keys",
        "organizations",
        "schema_migrations",
        "server_secrets",
        "submission_count_slots",
        "submission_counts",
        "submission_events_outbox",
        "submission_file_chunks",
        "submission_files",
        "submissions",
        "webhook_deliveries",
        "webhooks",
      ],
    );
  } finally {
    await db.close();
  }
});

test("instances starting together against one PostgreSQL migrate exactly once", {
  skip: !process.env.DATABASE_URL,
}, async () => {
  const schema = `migrate_${randomUUID().replaceAll("-", "")}`;
  const admin = await openDatabase({
    databaseUrl: process.env.DATABASE_URL ?? null,
    dataDir: null,
  });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(process.env.DATABASE_URL as string);
  // public stays visible: pg_trgm is installed once per database, there.
  url.searchParams.set("options", `-c search_path=${schema},public`);
  const instances = await Promise.all(
    [1, 2, 3].map(() => openDatabase({ databaseUrl: url.toString(), dataDir: null })),
  );
  try {
    const applied = await Promise.all(instances.map((db) => migrate(db)));
    assert.deepEqual(applied.flat(), ALL);
    const rows = await admin.query<{ name: string }>(
      `SELECT name FROM ${schema}.schema_migrations`,
    );
    assert.deepEqual(
      rows.map((row) => row.name),
      ALL,
    );
  } finally {
    await Promise.all(instances.map((db) => db.close()));
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
});

/**
 * Organizations are never deleted by formdeck (no route or command does): the references to them
 * need no index for a cascade, and one on `submissions` would cost every intake an index write.
 */
const NEVER_CASCADED = ["submissions.organization_id", "webhooks.organization_id"];

test("every reference a deletion cascades through leads an index, so no deletion scans a table", async () => {
  const db = await openDatabase({ databaseUrl: null, dataDir: null });
  try {
    await migrate(db);
    const unindexed = await db.query<{ reference: string }>(
      `SELECT c.conrelid::regclass::text || '.' || a.attname AS reference
         FROM pg_constraint c
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
          AND NOT EXISTS (
            SELECT 1 FROM pg_index i
             WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1] AND i.indpred IS NULL)
        ORDER BY 1`,
    );
    assert.deepEqual(
      unindexed.map((row) => row.reference),
      NEVER_CASCADED,
    );
  } finally {
    await db.close();
  }
});

test("file slices are compressed with lz4 where the store offers it, else as the store does by default", async () => {
  const db = await testDatabase();
  try {
    const [store] = await db.query<{ offersLz4: boolean }>(
      `SELECT 'lz4' = ANY (enumvals) AS "offersLz4" FROM pg_settings
        WHERE name = 'default_toast_compression'`,
    );
    const [column] = await db.query<{ compression: string }>(
      `SELECT attcompression::text AS compression FROM pg_attribute
        WHERE attrelid = 'submission_file_chunks'::regclass AND attname = 'content'`,
    );
    // PostgreSQL as Debian builds it offers lz4; PGlite does not.
    assert.equal(store?.offersLz4, Boolean(process.env.DATABASE_URL));
    assert.deepEqual(column, { compression: store?.offersLz4 ? "l" : "" });
  } finally {
    await closeTestDatabase();
  }
});
