import assert from "node:assert/strict";
import { get } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { parse } from "csv-parse/sync";
import { FileLinks } from "../../src/files/file-links.ts";
import { exportSubmissions } from "../../src/submissions/submission-export.ts";
import { client, MISSING_ID, NOT_FOUND, unprocessable } from "../forms/form-fixtures.ts";
import { createTenant, useTestApp } from "../helpers.ts";
import {
  answersOf,
  at,
  recordOf,
  type SeedSpec,
  seedSubmissions,
  submissionsClient,
} from "./submission-fixtures.ts";

const built = useTestApp();

async function tenantWithForm() {
  const tenant = await createTenant();
  const form = await client(built.app, tenant.fullKey).createOk({ name: "Contact" });
  return { ...tenant, form, api: submissionsClient(built.app, tenant.readKey) };
}

const BOM = "\uFEFF";

/** The records of an RFC 4180 text, read by a standard parser; the text must start with a BOM. */
function csvOf(text: string): string[][] {
  assert.ok(text.startsWith(BOM), "a byte order mark first");
  const body = text.slice(1);
  assert.ok(body.endsWith("\r\n"), "every record ends with CRLF");
  // The parser finds the record delimiter itself: a line break left unquoted would end a record.
  return parse(body);
}

const ndjsonOf = (text: string) =>
  text === ""
    ? []
    : text
        .replace(/\n$/, "")
        .split("\n")
        .map((line) => JSON.parse(line));

test("CSV: BOM, CRLF, columns in order of first appearance, quoting and formula cells", async () => {
  const { form, api } = await tenantWithForm();
  const rows = await seedSubmissions(built.db, form, [
    { createdAt: at(0), answers: answersOf({ name: "Ada", email: "ada@example.com" }) },
    {
      createdAt: at(1),
      answers: answersOf({ name: 'Bo, "the" Builder', phone: "+49 30 123", email: "bo@x.test" }),
    },
    {
      createdAt: at(2),
      answers: answersOf({
        message: "line one\nline two\r\nline three",
        name: '=HYPERLINK("http://evil.test")',
        topics: ["news", "offers"],
        count: 3,
        consent: true,
        extra: { a: [1, "b"] },
        nothing: null,
      }),
    },
    {
      createdAt: at(3),
      answers: answersOf({ name: "-1+2", email: "@handle", message: "\tindented", phone: "\rx" }),
    },
    { createdAt: at(4), isSpam: true, answers: answersOf({ spamOnly: "buy now" }) },
  ]);
  const res = await api.exportAll(form.id);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers["content-type"], "text/csv; charset=utf-8");
  assert.equal(
    res.headers["content-disposition"],
    `attachment; filename="${form.id}-submissions.csv"`,
  );
  const [r0, r1, r2, r3] = rows;
  const stamp = (row: (typeof rows)[number] | undefined) => row?.createdAt.toISOString();
  assert.deepEqual(csvOf(res.text), [
    [
      "id",
      "createdAt",
      "isSpam",
      "name",
      "email",
      "phone",
      "message",
      "topics",
      "count",
      "consent",
      "extra",
      "nothing",
      "files",
    ],
    [
      r3?.id,
      stamp(r3),
      "false",
      "'-1+2",
      "'@handle",
      "'\rx",
      "'\tindented",
      "",
      "",
      "",
      "",
      "",
      "",
    ],
    [
      r2?.id,
      stamp(r2),
      "false",
      '\'=HYPERLINK("http://evil.test")',
      "",
      "",
      "line one\nline two\r\nline three",
      "news; offers",
      "3",
      "true",
      '{"a":[1,"b"]}',
      "",
      "",
    ],
    [
      r1?.id,
      stamp(r1),
      "false",
      'Bo, "the" Builder',
      "bo@x.test",
      "'+49 30 123",
      "",
      "",
      "",
      "",
      "",
      "",
      "",
    ],
    [r0?.id, stamp(r0), "false", "Ada", "ada@example.com", "", "", "", "", "", "", "", ""],
  ]);
  // Quotes are doubled inside quoted fields, as RFC 4180 has it.
  assert.ok(res.text.includes('"Bo, ""the"" Builder"'));
  const spam = csvOf((await api.exportAll(form.id, { isSpam: "true", format: "csv" })).text);
  assert.deepEqual(spam, [
    ["id", "createdAt", "isSpam", "spamOnly", "files"],
    [rows[4]?.id, stamp(rows[4]), "true", "buy now", ""],
  ]);
});

test("NDJSON: one submission per line, exactly as the API returns it; the filters apply", async () => {
  const { form, api } = await tenantWithForm();
  await seedSubmissions(built.db, form, [
    { createdAt: at(0) },
    { createdAt: at(1), answers: answersOf({ message: "Find ME" }) },
    { createdAt: at(2), isSpam: true, answers: answersOf({ message: "find me too" }) },
    { createdAt: at(3), answers: answersOf({ nested: { x: [1, null] }, list: ["a", "b"] }) },
  ]);
  const queries: Record<string, string>[] = [
    {},
    { isSpam: "true" },
    { search: "find me" },
    { search: "find me", isSpam: "true" },
    { since: at(1).toISOString(), until: at(3).toISOString() },
  ];
  for (const query of queries) {
    const res = await api.exportAll(form.id, { ...query, format: "ndjson" });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["content-type"], "application/x-ndjson; charset=utf-8");
    assert.equal(
      res.headers["content-disposition"],
      `attachment; filename="${form.id}-submissions.ndjson"`,
    );
    const listed = await api.listOk(form.id, { ...query, pageSize: "100" });
    assert.ok(res.text.endsWith("\n") || res.text === "");
    assert.deepEqual(ndjsonOf(res.text), listed.data, JSON.stringify(query));
    // Byte for byte the API's text of each record.
    for (const [i, line] of res.text.split("\n").slice(0, -1).entries()) {
      const one = await api.get(form.id, listed.data[i].id);
      assert.equal(line, one.text);
    }
  }
});

test("a form without submissions: the header alone, or nothing", async () => {
  const { form, api } = await tenantWithForm();
  const csv = await api.exportAll(form.id);
  assert.equal(csv.text, `${BOM}id,createdAt,isSpam,files\r\n`);
  const ndjson = await api.exportAll(form.id, { format: "ndjson" });
  assert.deepEqual([ndjson.status, ndjson.text], [200, ""]);
});

test("HEAD does not run an export only to throw it away: there is no such route", async () => {
  const { form, readKey } = await tenantWithForm();
  const res = await built.app.inject({
    method: "HEAD",
    url: `/api/v1/forms/${form.id}/submissions/export`,
    headers: { "api-key": readKey },
  });
  assert.equal(res.statusCode, 404);
});

test("refusals: bad parameters 422 by name, another organization's or a missing form 404", async () => {
  const { form, api } = await tenantWithForm();
  const theirs = await tenantWithForm();
  const cases: [Record<string, string>, string][] = [
    [{ format: "xml" }, "format: must be one of csv, ndjson"],
    [{ page: "1" }, "page: is not a known parameter"],
    [
      { since: "soon" },
      "since: must be an ISO 8601 instant with a time zone, such as 2026-11-22T04:51:21Z",
    ],
    [{ isSpam: "1" }, "isSpam: must be one of true, false"],
  ];
  for (const [query, message] of cases) {
    const res = await api.exportAll(form.id, query);
    assert.deepEqual([res.status, res.body], [422, unprocessable(message)], message);
  }
  for (const formId of [theirs.form.id, MISSING_ID, "nope"]) {
    const res = await api.exportAll(formId, { format: "ndjson" });
    assert.deepEqual([res.status, res.body], [404, NOT_FOUND], formId);
  }
});

test("keyset batches neither skip nor repeat rows that tie on their instant, to the microsecond", async () => {
  const { form, org } = await tenantWithForm();
  const specs: SeedSpec[] = Array.from({ length: 40 }, (_, i) => ({ createdAt: at(i % 4) }));
  await seedSubmissions(built.db, form, specs);
  // Times finer than a millisecond, as SQL's now() would write them.
  await built.db.query(
    `UPDATE submissions SET created_at = created_at + (interval '1 microsecond' * (ascii(right(id, 1)) % 3))
      WHERE form_id = $1`,
    [form.id],
  );
  const expected = await built.db.query<{ id: string }>(
    "SELECT id FROM submissions WHERE form_id = $1 ORDER BY created_at DESC, id DESC",
    [form.id],
  );
  const owner = { keyId: "key_test", organizationId: org.id, scope: "read", plan: "free" } as const;
  for (const batchSize of [1, 3, 7, 40, 41]) {
    const exported = await exportSubmissions(
      built.db,
      new FileLinks(built.db, "http://localhost:3000"),
      owner,
      form.id,
      { format: "ndjson" },
      batchSize,
    );
    let text = "";
    for await (const chunk of exported.body) text += chunk;
    assert.deepEqual(
      ndjsonOf(text).map((record) => record.id),
      expected.map((row) => row.id),
      `batches of ${batchSize}`,
    );
  }
});

test("5,000 rows stream in chunks, each row once, newest first", async () => {
  const { form, readKey } = await tenantWithForm();
  const specs: SeedSpec[] = Array.from({ length: 5_000 }, (_, i) => ({
    createdAt: at(Math.floor(i / 3)),
  }));
  const rows = await seedSubmissions(built.db, form, specs);
  await built.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = built.app.server.address() as AddressInfo;
  const chunks: string[] = [];
  const status = await new Promise<number>((resolve, reject) => {
    get(
      {
        port,
        host: "127.0.0.1",
        path: `/api/v1/forms/${form.id}/submissions/export`,
        headers: { "api-key": readKey },
      },
      (res) => {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => chunks.push(chunk));
        res.on("end", () => resolve(res.statusCode as number));
        res.on("error", reject);
      },
    ).on("error", reject);
  });
  assert.equal(status, 200);
  assert.ok(chunks.length > 1, `${chunks.length} chunk(s)`);
  const records = csvOf(chunks.join(""));
  const expected = rows
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
    .map((row) => recordOf(row));
  assert.equal(records.length, 5_001);
  assert.deepEqual(
    records.slice(1).map((record) => record[0]),
    expected.map((record) => record.id),
  );
  assert.deepEqual(records[0], ["id", "createdAt", "isSpam", "name", "email", "message", "files"]);
});
