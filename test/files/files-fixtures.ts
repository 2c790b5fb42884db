import { crc32 } from "node:zlib";
import sharp from "sharp";
import type { Queryable } from "../../src/db/database.ts";
import type { Post } from "../intake/intake-fixtures.ts";

export const BOUNDARY = "FilesBoundary7MA4YWxkTrZu0gW";
export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

export interface Part {
  name: string;
  value?: string;
  /** A file part: its name as sent, its bytes and the type the client declares. */
  file?: { name: string; content: Buffer; type?: string };
}

/** The bytes of a multipart body, as a browser writes it. */
export function multipartBytes(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = part.file
      ? `form-data; name="${part.name}"; filename="${part.file.name}"\r\nContent-Type: ${
          part.file.type ?? "application/octet-stream"
        }`
      : `form-data; name="${part.name}"`;
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`));
    chunks.push(part.file ? part.file.content : Buffer.from(part.value ?? ""));
    chunks.push(Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export const upload = (parts: Part[]): Post => ({
  body: multipartBytes(parts),
  contentType: MULTIPART_TYPE,
});

/** A photo-like image: noise, so that it does not compress to nothing. */
export function image(
  format: "png" | "jpeg" | "webp" | "gif" | "avif",
  width: number,
  height: number,
): Promise<Buffer> {
  return sharp({
    create: {
      width,
      height,
      channels: 3,
      background: "#3366cc",
      noise: { type: "gaussian", mean: 128, sigma: 30 },
    },
  })
    .toFormat(format)
    .toBuffer();
}

/** A PNG whose header declares `width` × `height` pixels, with a single tiny row of data. */
export function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", Buffer.alloc(2_000)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A GIF of `frames` frames of 1 × 1 pixel each on a `width` × `height` screen. */
export function gifOfFrames(frames: number, width = 2, height = 2): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  screen.set([0x80, 0, 0], 4); // a global table of two colors
  const frame = Buffer.from([
    0x21,
    0xf9,
    0x04,
    0x00,
    0x0a,
    0x00,
    0x00,
    0x00, // graphic control: 0.1 s
    0x2c,
    0,
    0,
    0,
    0,
    1,
    0,
    1,
    0,
    0x00, // image descriptor: 1 × 1 at 0,0
    0x02,
    0x02,
    0x44,
    0x01,
    0x00, // LZW data
  ]);
  return Buffer.concat([
    Buffer.from("GIF89a", "latin1"),
    screen,
    Buffer.from([0, 0, 0, 0xff, 0xff, 0xff]),
    Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from("NETSCAPE2.0"), 0x03, 0x01, 0, 0, 0x00]),
    ...Array.from({ length: frames }, () => frame),
    Buffer.from([0x3b]),
  ]);
}

/** `jpeg` with APP1 (EXIF) segments totalling about `bytes` right after its start marker. */
export function withExifBlock(jpeg: Buffer, bytes: number): Buffer {
  const segments: Buffer[] = [];
  const payload = 65_000;
  for (let written = 0; written < bytes; written += payload) {
    const segment = Buffer.alloc(4 + payload);
    segment.set([0xff, 0xe1], 0);
    segment.writeUInt16BE(payload + 2, 2);
    segment.write("Exif\0\0MM", 4, "latin1");
    segment.fill("GPS", 12, segment.length, "latin1");
    segments.push(segment);
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

export const ELF = Buffer.concat([
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]),
  Buffer.alloc(120),
]);

export interface StoredFileRow {
  id: string;
  submissionId: string;
  name: string;
  type: string;
  size: number;
}

/** Every stored file of the form's submissions, its size the bytes its slices hold. */
export function storedFiles(db: Queryable, formId: string) {
  return db.query<StoredFileRow>(
    `SELECT sf.id, sf.submission_id AS "submissionId", sf.name, sf.type,
            (SELECT coalesce(sum(octet_length(c.content)), 0)::int
               FROM submission_file_chunks c WHERE c.file_id = sf.id) AS size
       FROM submission_files sf JOIN submissions s ON s.id = sf.submission_id
      WHERE s.form_id = $1 ORDER BY sf.name`,
    [formId],
  );
}

/** A zip archive of `entries`, stored without compression, as Office writes its documents. */
export function zipOf(entries: { name: string; content: string }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const data = Buffer.from(entry.content);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The start of a Compound File (Word 97, Excel 97, MSI…): its signature and an empty header. */
export const CFB = Buffer.concat([
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
  Buffer.alloc(504),
]);
