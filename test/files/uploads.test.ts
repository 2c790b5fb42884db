import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import sharp from "sharp";
import { cleanFileName } from "../../src/files/file-names.ts";
import { buildTestApp, closeTestDatabase } from "../helpers.ts";
import { assertRefused, newForm, post } from "../intake/intake-fixtures.ts";
import { submissionsClient } from "../submissions/submission-fixtures.ts";
import {
  CFB,
  ELF,
  gifOfFrames,
  image,
  pngClaiming,
  storedFiles,
  upload,
  withExifBlock,
  zipOf,
} from "./files-fixtures.ts";

let built: Awaited<ReturnType<typeof buildTestApp>>;

before(async () => {
  built = await buildTestApp({
    uploadMaxFiles: 3,
    uploadMaxFileBytes: 2_000_000,
    uploadMaxTotalBytes: 3_000_000,
  });
});

after(async () => {
  await built.close();
  await closeTestDatabase();
});

const refusal = (code: string, message: string) => ({ error: { code, message } });
const notAllowed = (field: string) =>
  refusal("unprocessable_entity", `${field}: file type not allowed`);

/** Posts the upload to a new form; the submission as the API reads it, and the form. */
async function accepted(parts: Parameters<typeof upload>[0], settings = {}) {
  const form = await newForm(built.app, settings);
  const res = await post(built.app, form.id, upload(parts));
  assert.equal(res.status, 201, res.text);
  const api = submissionsClient(built.app, form.key);
  const record = await api.get(form.id, res.body.id);
  assert.equal(record.status, 200, record.text);
  return { form, record: record.body, api };
}

async function download(key: string, formId: string, submissionId: string, fileId: string) {
  return built.app.inject({
    method: "GET",
    url: `/api/v1/forms/${formId}/submissions/${submissionId}/files/${fileId}`,
    headers: { "api-key": key },
  });
}

test("files of every accepted type are stored as sent, typed by their content", async () => {
  const png = await image("png", 40, 30);
  const jpeg = await image("jpeg", 40, 30);
  const parts = [
    { name: "message", value: "see attached" },
    { name: "shot", file: { name: "screen.png", content: png, type: "image/png" } },
    { name: "photo", file: { name: "photo.bin", content: jpeg } },
    { name: "notes", file: { name: "notes.txt", content: Buffer.from("héllo\n") } },
  ];
  const { form, record } = await accepted(parts);
  assert.deepEqual(record.answers, [{ id: "message", label: "message", value: "see attached" }]);
  const files = record.files.map(
    ({ url: _url, id: _id, ...rest }: Record<string, unknown>) => rest,
  );
  assert.deepEqual(files, [
    { field: "shot", name: "screen.png", type: "image/png", size: png.length },
    { field: "photo", name: "photo.bin", type: "image/jpeg", size: jpeg.length },
    { field: "notes", name: "notes.txt", type: "text/plain", size: 7 },
  ]);
  const stored = await storedFiles(built.db, form.id);
  assert.equal(stored.length, 3);
  for (const [file, content] of [
    [record.files[0], png],
    [record.files[1], jpeg],
  ] as const) {
    const res = await download(form.key, form.id, record.id, file.id);
    assert.equal(res.statusCode, 200);
    assert.ok(res.rawPayload.equals(content));
  }
});

test("svg, csv, pdf, docx-less office types: text types by extension and content", async () => {
  const svg = Buffer.from(
    '<?xml version="1.0"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
  );
  const csv = Buffer.from("a,b\n1,2\n");
  const pdf = Buffer.from("%PDF-1.4\n<html><script>alert(1)</script></html>\n%%EOF");
  const { record } = await accepted([
    { name: "logo", file: { name: "logo.svg", content: svg } },
    { name: "sheet", file: { name: "data.csv", content: csv } },
    { name: "cv", file: { name: "cv.html", content: pdf, type: "text/html" } },
  ]);
  assert.deepEqual(
    record.files.map((file: { type: string }) => file.type),
    ["image/svg+xml", "text/csv", "application/pdf"],
  );
});

for (const [what, file] of [
  [
    "HTML named photo.png",
    { name: "photo.png", content: Buffer.from("<html><script>alert(1)</script></html>") },
  ],
  ["an ELF binary named cv.pdf", { name: "cv.pdf", content: ELF }],
  [
    "text that is not UTF-8 named notes.txt",
    { name: "notes.txt", content: Buffer.from([0x61, 0xff, 0xfe]) },
  ],
  [
    "an svg without an <svg> root",
    { name: "x.svg", content: Buffer.from("<html><svg></svg></html>") },
  ],
  [
    "a zip archive",
    { name: "a.zip", content: Buffer.from("PK\u0003\u0004\u0014\u0000\u0000\u0000") },
  ],
] as const) {
  test(`${what}: 422 file type not allowed, nothing stored`, async () => {
    const { id } = await newForm(built.app);
    const res = await post(built.app, id, upload([{ name: "doc", file: { ...file } }]));
    await assertRefused(built.db, id, res, 422, notAllowed("doc"));
  });
}

test("limits: count, size of one, size of all, each 413 naming the field; nothing stored", async () => {
  const { id } = await newForm(built.app);
  const text = (bytes: number) => Buffer.alloc(bytes, "a");
  const file = (name: string, bytes: number) => ({
    name,
    file: { name: `${name}.txt`, content: text(bytes) },
  });
  const cases: [Parameters<typeof upload>[0], string][] = [
    [
      [file("a", 10), file("b", 10), file("c", 10), file("d", 10)],
      "d: at most 3 files may be sent with a submission",
    ],
    [[file("big", 2_000_001)], "big: a file may be at most 2000000 bytes"],
    [[file("a", 1_500_000), file("b", 1_500_001)], "b: files may total at most 3000000 bytes"],
  ];
  for (const [parts, message] of cases) {
    const res = await post(built.app, id, upload(parts));
    await assertRefused(built.db, id, res, 413, refusal("payload_too_large", message));
  }
  // 1,000 file parts: refused at the first one past the count.
  const many = Array.from({ length: 1_000 }, (_, i) => file(`f${i}`, 1));
  const res = await post(built.app, id, upload(many));
  await assertRefused(
    built.db,
    id,
    res,
    413,
    refusal("payload_too_large", "f3: at most 3 files may be sent with a submission"),
  );
});

test("a body of fields only keeps the submission body limit beside files", async () => {
  const { id } = await newForm(built.app);
  const res = await post(
    built.app,
    id,
    upload([
      { name: "text", value: "x".repeat(1_048_577) },
      { name: "a", file: { name: "a.txt", content: Buffer.from("hi") } },
    ]),
  );
  await assertRefused(
    built.db,
    id,
    res,
    413,
    refusal("payload_too_large", "body: must be at most 1048576 bytes"),
  );
});

test("an image over 100 megapixels is refused from its header, compressed or not", async () => {
  for (const settings of [{}, { imageCompressionType: ["png"] }]) {
    const { id } = await newForm(built.app, settings);
    const bomb = pngClaiming(50_000, 50_000);
    assert.ok(bomb.length < 5_000);
    const res = await post(
      built.app,
      id,
      upload([{ name: "pic", file: { name: "a.png", content: bomb } }]),
    );
    await assertRefused(
      built.db,
      id,
      res,
      422,
      refusal("unprocessable_entity", "pic: image must be at most 100000000 pixels"),
    );
  }
  const { id } = await newForm(built.app);
  const frames = gifOfFrames(10_000, 100, 101);
  const res = await post(
    built.app,
    id,
    upload([{ name: "anim", file: { name: "a.gif", content: frames } }]),
  );
  await assertRefused(
    built.db,
    id,
    res,
    422,
    refusal("unprocessable_entity", "anim: image must be at most 100000000 pixels"),
  );
});

test("a GIF of 10,000 small frames under the limit is kept as sent", async () => {
  const frames = gifOfFrames(10_000);
  const { record } = await accepted([{ name: "anim", file: { name: "a.gif", content: frames } }]);
  assert.deepEqual([record.files[0].type, record.files[0].size], ["image/gif", frames.length]);
});

test("a truncated JPEG of a compressed type: 422, nothing stored", async () => {
  const { id } = await newForm(built.app, { imageCompressionType: ["jpeg"] });
  const jpeg = (await image("jpeg", 400, 300)).subarray(0, 3_000);
  const res = await post(
    built.app,
    id,
    upload([{ name: "pic", file: { name: "a.jpg", content: jpeg } }]),
  );
  await assertRefused(
    built.db,
    id,
    res,
    422,
    refusal("unprocessable_entity", "pic: image could not be read"),
  );
});

test("compressed images: their own format, longest side 4,096 px, metadata removed", async () => {
  const wide = await image("png", 5_000, 50);
  const exif = withExifBlock(await image("jpeg", 300, 200), 1_000_000);
  const webp = await sharp(await image("webp", 64, 64))
    .withMetadata({ exif: { IFD0: { Copyright: "me" } } })
    .webp()
    .toBuffer();
  const { form, record } = await accepted(
    [
      { name: "wide", file: { name: "wide.png", content: wide } },
      { name: "photo", file: { name: "photo.jpg", content: exif } },
      { name: "small", file: { name: "small.webp", content: webp } },
    ],
    { imageCompressionType: ["png", "jpeg", "webp"] },
  );
  const contents = [];
  for (const file of record.files) {
    const res = await download(form.key, form.id, record.id, file.id);
    assert.equal(res.rawPayload.length, file.size);
    contents.push(res.rawPayload);
  }
  const [png, jpeg, small] = await Promise.all(
    contents.map((content) => sharp(content).metadata()),
  );
  assert.deepEqual([png?.format, png?.width, png?.height], ["png", 4096, 41]);
  assert.deepEqual(
    [jpeg?.format, jpeg?.width, jpeg?.height, jpeg?.exif],
    ["jpeg", 300, 200, undefined],
  );
  assert.ok((contents[1] as Buffer).length < 100_000, "the 1 MB EXIF block is gone");
  assert.deepEqual([small?.format, small?.exif], ["webp", undefined]);
  assert.equal(record.files[1].type, "image/jpeg");
});

test("a type not listed in imageCompressionType is kept byte for byte", async () => {
  const jpeg = withExifBlock(await image("jpeg", 30, 20), 70_000);
  const { form, record } = await accepted([{ name: "p", file: { name: "p.jpg", content: jpeg } }], {
    imageCompressionType: ["png"],
  });
  const res = await download(form.key, form.id, record.id, record.files[0].id);
  assert.ok(res.rawPayload.equals(jpeg));
});

test("names are for display: paths, control and bidi characters removed, 255 bytes at most, the extension kept", async () => {
  const png = await image("png", 4, 4);
  const names = [
    "../../etc/passwd",
    "..\\..\\boot.ini",
    "a\u0000b.png",
    "invoice\u202Egnp.exe",
    `${"é".repeat(5_000)}.png`,
    "..",
  ];
  const { record } = await accepted(
    names.map((name, i) => ({ name: `f${i}`, file: { name, content: png } })).slice(0, 3),
  );
  const more = await accepted(
    names.map((name, i) => ({ name: `f${i}`, file: { name, content: png } })).slice(3),
  );
  const stored = [...record.files, ...more.record.files].map((file: { name: string }) => file.name);
  assert.deepEqual(stored.slice(0, 4), ["passwd", "boot.ini", "ab.png", "invoicegnp.exe"]);
  assert.equal(stored[4], `${"é".repeat(125)}.png`);
  assert.equal(Buffer.byteLength(stored[4] as string), 254);
  assert.equal(stored[5], "file");
});

test("a text file whose name is over 255 bytes is told by the extension it keeps", async () => {
  const long = "report ".repeat(2_000);
  const { record } = await accepted([
    { name: "notes", file: { name: `${long}.txt`, content: Buffer.from("plain text") } },
    { name: "table", file: { name: `${long}.csv`, content: Buffer.from("a,b\n1,2\n") } },
  ]);
  assert.deepEqual(
    record.files.map((file: { name: string; type: string }) => [
      file.name.slice(-8),
      Buffer.byteLength(file.name),
      file.type,
    ]),
    [
      ["port.txt", 255, "text/plain"],
      ["port.csv", 255, "text/csv"],
    ],
  );
  // An ending too long to be an extension is not kept apart: the name is cut at 255 bytes.
  assert.equal(cleanFileName(`${"x".repeat(300)}.${"y".repeat(40)}`), "x".repeat(255));
});

test("an untouched file input is ignored; a file-only body is a submission", async () => {
  const { record } = await accepted([
    { name: "empty", file: { name: "", content: Buffer.alloc(0) } },
    { name: "doc", file: { name: "a.txt", content: Buffer.from("x") } },
  ]);
  assert.deepEqual(record.answers, []);
  assert.deepEqual(
    record.files.map((file: { field: string }) => file.field),
    ["doc"],
  );
});

test("submissionStorageDuration never: counted, no file stored", async () => {
  const form = await newForm(built.app, { submissionStorageDuration: "never" });
  const res = await post(
    built.app,
    form.id,
    upload([{ name: "doc", file: { name: "a.txt", content: Buffer.from("x") } }]),
  );
  assert.equal(res.status, 201);
  const rows = await built.db.query("SELECT id FROM submission_files WHERE submission_id = $1", [
    res.body.id,
  ]);
  assert.deepEqual(rows, []);
});

test("Idempotency-Key with files: a retry stores once; other file content under the key is 422", async () => {
  const form = await newForm(built.app);
  const parts = (text: string) => [
    { name: "a", value: "1" },
    { name: "doc", file: { name: "a.txt", content: Buffer.from(text) } },
  ];
  const keyed = (text: string) => ({
    ...upload(parts(text)),
    headers: { "idempotency-key": "retry-1" },
  });
  const first = await post(built.app, form.id, keyed("first"));
  const again = await post(built.app, form.id, keyed("first"));
  assert.deepEqual([first.status, again.status, again.body], [201, 201, first.body]);
  assert.equal(again.headers["idempotent-replayed"], "true");
  const other = await post(built.app, form.id, keyed("other"));
  assert.deepEqual(
    [other.status, other.body],
    [
      422,
      refusal(
        "unprocessable_entity",
        "Idempotency-Key: was already used with a different request body",
      ),
    ],
  );
  assert.equal((await storedFiles(built.db, form.id)).length, 1);
});

test("a nameless file part with content counts as a file; a file's field name obeys the name rules", async () => {
  const { id } = await newForm(built.app);
  const text = { content: Buffer.from("x") };
  const counted = await post(
    built.app,
    id,
    upload([
      { name: "a", file: { name: "a.txt", ...text } },
      { name: "b", file: { name: "b.txt", ...text } },
      { name: "c", file: { name: "c.txt", ...text } },
      { name: "nameless", file: { name: "", ...text } },
    ]),
  );
  await assertRefused(
    built.db,
    id,
    counted,
    413,
    refusal("payload_too_large", "nameless: at most 3 files may be sent with a submission"),
  );
  const long = await post(
    built.app,
    id,
    upload([{ name: "n".repeat(2_000), file: { name: "a.txt", ...text } }]),
  );
  await assertRefused(
    built.db,
    id,
    long,
    422,
    refusal("unprocessable_entity", "body: has a field name longer than 1000 characters"),
  );
});

test("HEIC, which the image library cannot decode, is kept as sent", async () => {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write("ftypheic", 4, "latin1");
  ftyp.write("mif1heic", 16, "latin1");
  const heic = Buffer.concat([ftyp, Buffer.alloc(200, 1)]);
  const { form, record } = await accepted(
    [{ name: "photo", file: { name: "IMG_0001.HEIC", content: heic } }],
    { imageCompressionType: ["jpeg", "png", "webp"] },
  );
  assert.deepEqual([record.files[0].type, record.files[0].size], ["image/heic", heic.length]);
  const res = await download(form.key, form.id, record.id, record.files[0].id);
  assert.ok(res.rawPayload.equals(heic));
});

test("Office documents: docx and xlsx from their content, doc and xls from their container and name", async () => {
  // As Office writes them: the main part's type is in [Content_Types].xml.
  const contentTypes = (main: string) =>
    `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/main.xml" ContentType="application/vnd.openxmlformats-officedocument.${main}.main+xml"/></Types>`;
  const docx = zipOf([
    { name: "[Content_Types].xml", content: contentTypes("wordprocessingml.document") },
    { name: "word/document.xml", content: "<w:document/>" },
  ]);
  const xlsx = zipOf([
    { name: "[Content_Types].xml", content: contentTypes("spreadsheetml.sheet") },
    { name: "xl/workbook.xml", content: "<workbook/>" },
  ]);
  const office = await accepted([
    { name: "a", file: { name: "letter.bin", content: docx } },
    { name: "b", file: { name: "sheet", content: xlsx } },
  ]);
  const legacy = await accepted([
    { name: "c", file: { name: "letter.doc", content: CFB } },
    { name: "d", file: { name: "SHEET.XLS", content: CFB } },
  ]);
  assert.deepEqual(
    [...office.record.files, ...legacy.record.files].map((file: { type: string }) => file.type),
    [
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "application/msword",
      "application/vnd.ms-excel",
    ],
  );
  const { id } = await newForm(built.app);
  const msi = await post(
    built.app,
    id,
    upload([{ name: "setup", file: { name: "setup.msi", content: CFB } }]),
  );
  await assertRefused(built.db, id, msi, 422, notAllowed("setup"));
});
