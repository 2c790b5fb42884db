import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { parse } from "csv-parse/sync";
import { FileLinks } from "../../src/files/file-links.ts";
import { FILE_SLICE_BYTES, fileSlices } from "../../src/files/files.repository.ts";
import { deleteExpiredSubmissions } from "../../src/submissions/retention.ts";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import { newForm, post } from "../intake/intake-fixtures.ts";
import { submissionsClient } from "../submissions/submission-fixtures.ts";
import { image, storedFiles, upload } from "./files-fixtures.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;

before(async () => {
  built = await buildTestApp({ publicUrl: "https://forms.example.com" });
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(document.cookie)</script></svg>',
);
const POLYGLOT = Buffer.from(
  "%PDF-1.4\n<html><body><script>alert(1)</script></body></html>\n%%EOF",
);

/** A form with one submission carrying an SVG, a PDF/HTML polyglot and a PNG. */
async function submissionWithFiles() {
  const form = await newForm(built.app);
  const png = await image("png", 8, 8);
  const res = await post(
    built.app,
    form.id,
    upload([
      { name: "name", value: "Ada" },
      { name: "logo", file: { name: "logo.svg", content: SVG, type: "image/svg+xml" } },
      { name: "cv", file: { name: "résumé (final).pdf", content: POLYGLOT, type: "text/html" } },
      { name: "pic", file: { name: "pic.png", content: png } },
    ]),
  );
  assert.equal(res.status, 201, res.text);
  const api = submissionsClient(built.app, form.key);
  const record = (await api.get(form.id, res.body.id)).body;
  return { form, api, record, contents: [SVG, POLYGLOT, png] };
}

const fileUrl = (formId: string, submissionId: string, fileId: string) =>
  `/api/v1/forms/${formId}/submissions/${submissionId}/files/${fileId}`;

function assertServedSafely(res: Awaited<ReturnType<typeof built.app.inject>>, type: string) {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(String(res.headers["content-type"]).split(";")[0], type);
  assert.equal(res.headers["x-content-type-options"], "nosniff");
  assert.equal(res.headers["content-security-policy"], "sandbox");
  assert.match(String(res.headers["content-disposition"]), /^attachment; /);
}

test("the API serves each file as a sandboxed attachment of its detected type", async () => {
  const { form, record, contents } = await submissionWithFiles();
  const types = ["image/svg+xml", "application/pdf", "image/png"];
  for (const [i, file] of record.files.entries()) {
    const res = await built.app.inject({
      url: fileUrl(form.id, record.id, file.id),
      headers: { "api-key": form.key },
    });
    assertServedSafely(res, types[i] as string);
    assert.ok(res.rawPayload.equals(contents[i] as Buffer));
  }
  const cv = await built.app.inject({
    url: fileUrl(form.id, record.id, record.files[1].id),
    headers: { "api-key": form.key },
  });
  assert.equal(
    cv.headers["content-disposition"],
    "attachment; filename=\"r_sum_ (final).pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29.pdf",
  );
});

test("the tenant rule: another organization's key gets 404; a read key may download", async () => {
  const { form, record } = await submissionWithFiles();
  const other = await createTenant();
  const file = record.files[0];
  const refused = await built.app.inject({
    url: fileUrl(form.id, record.id, file.id),
    headers: { "api-key": other.fullKey },
  });
  assert.equal(refused.statusCode, 404);
  assert.deepEqual(refused.json(), { error: { code: "not_found", message: "form: not found" } });
  const missing = [
    [fileUrl(form.id, "sub_AAAAAAAAAAAAAAAAAAAAAA", file.id), "submission: not found"],
    [fileUrl(form.id, record.id, "file_AAAAAAAAAAAAAAAAAAAAAA"), "file: not found"],
    [fileUrl(form.id, record.id, "nonsense"), "file: not found"],
  ];
  for (const [url, message] of missing) {
    const res = await built.app.inject({ url, headers: { "api-key": form.key } });
    assert.deepEqual(
      [res.statusCode, res.json()],
      [404, { error: { code: "not_found", message } }],
    );
  }
  const noKey = await built.app.inject({ url: fileUrl(form.id, record.id, file.id) });
  assert.equal(noKey.statusCode, 401);
});

test("signed links: work without a key for 7 days, built on PUBLIC_URL; refused when altered or expired", async () => {
  const { record, contents } = await submissionWithFiles();
  const file = record.files[2];
  const url = new URL(file.url);
  assert.equal(url.origin, "https://forms.example.com");
  assert.equal(url.pathname, `/files/${file.id}`);
  const expires = Number(url.searchParams.get("expires"));
  const week = Date.now() / 1000 + 7 * 24 * 3600;
  assert.ok(expires >= week && expires <= week + 3600, "valid 7 days, rounded up to the hour");
  const res = await built.app.inject({ url: `${url.pathname}${url.search}` });
  assertServedSafely(res, "image/png");
  assert.ok(res.rawPayload.equals(contents[2] as Buffer));

  const forbidden = (message: string) => ({ error: { code: "forbidden", message } });
  const badSignature = forbidden("signature: is not valid for this link");
  const altered = [
    `/files/${file.id}?expires=${expires + 3600}&signature=${url.searchParams.get("signature")}`,
    `/files/${record.files[0].id}?${url.searchParams}`,
    `/files/${file.id}?expires=${expires}&signature=AAAA`,
  ];
  for (const path of altered) {
    const refused = await built.app.inject({ url: path });
    assert.deepEqual([refused.statusCode, refused.json()], [403, badSignature], path);
  }
  const links = new FileLinks(built.db, "https://forms.example.com");
  const old = new URL((await links.signer(new Date(Date.now() - 8 * 24 * 3600 * 1000)))(file.id));
  const expired = await built.app.inject({ url: `${old.pathname}${old.search}` });
  assert.deepEqual(
    [expired.statusCode, expired.json()],
    [403, forbidden("expires: the link has expired")],
  );
});

test("another instance signs and checks with the same secret, kept once in the database", async () => {
  const { record } = await submissionWithFiles();
  const file = record.files[0];
  const elsewhere = new FileLinks(built.db, "https://forms.example.com");
  const fresh = new URL((await elsewhere.signer())(file.id));
  const res = await built.app.inject({ url: `${fresh.pathname}${fresh.search}` });
  assert.equal(res.statusCode, 200);
  const secrets = await built.db.query("SELECT name FROM server_secrets WHERE name = 'file_links'");
  assert.equal(secrets.length, 1);
});

test("files go with their submission: API delete, form delete, retention", async () => {
  const first = await submissionWithFiles();
  const link = new URL(first.record.files[0].url);
  assert.equal((await first.api.remove(first.form.id, first.record.id)).status, 204);
  assert.deepEqual(await storedFiles(built.db, first.form.id), []);
  const rows = await built.db.query("SELECT id FROM submission_files WHERE submission_id = $1", [
    first.record.id,
  ]);
  assert.deepEqual(rows, []);
  const gone = await built.app.inject({ url: `${link.pathname}${link.search}` });
  assert.deepEqual(
    [gone.statusCode, gone.json()],
    [404, { error: { code: "not_found", message: "file: not found" } }],
  );

  const second = await submissionWithFiles();
  const deleted = await built.app.inject({
    method: "DELETE",
    url: `/api/v1/forms/${second.form.id}`,
    headers: { "api-key": second.form.key },
  });
  assert.equal(deleted.statusCode, 204);
  const orphaned = await built.db.query(
    "SELECT id FROM submission_files WHERE submission_id = $1",
    [second.record.id],
  );
  assert.deepEqual(orphaned, []);

  const third = await submissionWithFiles();
  const shortened = await third.form.api.update(third.form.id, { submissionStorageDuration: "30" });
  assert.equal(shortened.status, 200);
  await deleteExpiredSubmissions(built.db, new Date(Date.now() + 31 * 24 * 3600 * 1000));
  assert.deepEqual(await storedFiles(built.db, third.form.id), []);
});

test("records list files with links; NDJSON has them whole, CSV their names", async () => {
  const { form, api, record } = await submissionWithFiles();
  assert.deepEqual(
    record.files.map(({ id: _id, url: _url, ...rest }: Record<string, unknown>) => rest),
    [
      { field: "logo", name: "logo.svg", type: "image/svg+xml", size: SVG.length },
      { field: "cv", name: "résumé (final).pdf", type: "application/pdf", size: POLYGLOT.length },
      { field: "pic", name: "pic.png", type: "image/png", size: record.files[2].size },
    ],
  );
  for (const file of record.files) assert.match(file.id, /^file_[A-Za-z0-9_-]{22}$/);
  const listed = await api.listOk(form.id);
  assert.deepEqual(listed.data, [record]);
  const ndjson = await api.exportAll(form.id, { format: "ndjson" });
  assert.deepEqual(JSON.parse(ndjson.text), record);
  const csv = await api.exportAll(form.id, { format: "csv" });
  const rows: string[][] = parse(csv.text.replace(/^\uFEFF/, ""));
  assert.deepEqual(rows[0], ["id", "createdAt", "isSpam", "name", "files"]);
  assert.deepEqual(rows[1]?.slice(3), ["Ada", "logo.svg; résumé (final).pdf; pic.png"]);
});

test("a file over one slice is stored in slices and served back whole, by the API and its link", async () => {
  const form = await newForm(built.app);
  // Text of 2.5 MiB whose bytes differ along its length, so that slices out of order would show.
  const content = Buffer.from(
    Array.from({ length: 2.5 * 1024 * 16 }, (_, i) => `${String(i).padStart(63, ".")}\n`).join(""),
  );
  assert.equal(content.length, 2.5 * FILE_SLICE_BYTES);
  const res = await post(
    built.app,
    form.id,
    upload([{ name: "notes", file: { name: "notes.txt", content } }]),
  );
  assert.equal(res.status, 201, res.text);
  const record = (await submissionsClient(built.app, form.key).get(form.id, res.body.id)).body;
  const [file] = record.files;
  const slices = await built.db.query<{ seq: number; bytes: number }>(
    `SELECT seq, octet_length(content) AS bytes FROM submission_file_chunks
      WHERE file_id = $1 ORDER BY seq`,
    [file.id],
  );
  assert.deepEqual(
    slices,
    [0, 1, 2].map((seq) => ({
      seq,
      bytes: Math.min(FILE_SLICE_BYTES, content.length - seq * FILE_SLICE_BYTES),
    })),
  );
  const byApi = await built.app.inject({
    url: fileUrl(form.id, record.id, file.id),
    headers: { "api-key": form.key },
  });
  assertServedSafely(byApi, "text/plain");
  assert.equal(byApi.headers["content-length"], String(content.length));
  assert.ok(byApi.rawPayload.equals(content));
  const byLink = await built.app.inject({
    url: new URL(file.url).pathname + new URL(file.url).search,
  });
  assertServedSafely(byLink, "text/plain");
  assert.ok(byLink.rawPayload.equals(content));
});

test("every byte value is stored and served back as sent, across slices (binary on PostgreSQL, base64 on the embedded store)", async () => {
  const form = await newForm(built.app);
  // A PDF's magic bytes, then each of the 256 byte values in turn, past one slice.
  const every = Buffer.from(Array.from({ length: 256 }, (_, value) => value));
  const content = Buffer.concat([
    Buffer.from("%PDF-1.7\n"),
    ...Array.from({ length: (FILE_SLICE_BYTES * 1.5) / 256 }, () => every),
  ]);
  const res = await post(
    built.app,
    form.id,
    upload([{ name: "doc", file: { name: "every-byte.pdf", content } }]),
  );
  assert.equal(res.status, 201, res.text);
  const [file] = (await submissionsClient(built.app, form.key).get(form.id, res.body.id)).body
    .files;
  const byApi = await built.app.inject({
    url: fileUrl(form.id, res.body.id, file.id),
    headers: { "api-key": form.key },
  });
  assertServedSafely(byApi, "application/pdf");
  assert.ok(byApi.rawPayload.equals(content));
});

test("a file deleted while it is read ends in an error, never a short body", async () => {
  const { record } = await submissionWithFiles();
  const [row] = await built.db.query<{ id: string; size: number }>(
    "SELECT id, size::float8 AS size FROM submission_files WHERE id = $1",
    [record.files[2].id],
  );
  assert.ok(row);
  // As if the file were larger than what its first slice holds, then deleted.
  const slices = fileSlices(built.db, {
    ...row,
    name: "pic.png",
    type: "image/png",
    size: row.size + 1,
  });
  assert.equal((await slices.next()).done, false);
  await built.db.query("DELETE FROM submission_files WHERE id = $1", [row.id]);
  await assert.rejects(slices.next(), /gone while it was being read/);
});

test("a file whose contents go between its lookup and its first slice answers 404, not 500", async () => {
  const { form, record } = await submissionWithFiles();
  const file = record.files[2];
  // As if the file were deleted right after its row was read: its slices are gone.
  await built.db.query("DELETE FROM submission_file_chunks WHERE file_id = $1", [file.id]);
  const res = await built.app.inject({
    url: fileUrl(form.id, record.id, file.id),
    headers: { "api-key": form.key },
  });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { error: { code: "not_found", message: "file: not found" } });
});
