import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { invalid } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { SubmittedFile } from "../intake/intake-body.ts";
import type { ArrivedFile } from "../intake/multipart-body.ts";
import { cleanFileName } from "./file-names.ts";
import { ACCEPTED_TYPES, detectFileType, RASTER_IMAGES } from "./file-types.ts";
import { COMPRESSIBLE, declaredPixels, MAX_IMAGE_PIXELS, reencodeImage } from "./images.ts";

/** A file accepted by check 6, waiting on disk for its submission to be stored. */
export interface ReceivedFile extends SubmittedFile {
  id: string;
  /** SHA-256 of the content as sent: an idempotent retry must send the same files. */
  digest: string;
  /** The content as it will be stored, read from disk when the submission is. */
  content(): Promise<Buffer>;
}

/**
 * The files of one request, kept on disk between their check and the store, so that a request
 * holds one file in memory at a time; removed once the request is answered.
 */
export class UploadSpool {
  private dir: Promise<string> | null = null;
  private disposed = false;

  async write(id: string, content: Buffer): Promise<string> {
    // A file still being checked when its request was refused must not make a directory anew.
    if (this.disposed) throw new Error("the upload was answered already");
    this.dir ??= mkdtemp(path.join(os.tmpdir(), "formdeck-upload-"));
    const file = path.join(await this.dir, id);
    await writeFile(file, content, { mode: 0o600 });
    return file;
  }

  async dispose() {
    this.disposed = true;
    if (this.dir) await rm(await this.dir, { recursive: true, force: true });
  }
}

const unreadable = (field: string) => invalid(field, "image could not be read");

/**
 * The file as it will be stored: its name cleaned, its type detected from its content (422
 * otherwise), an image's pixel count read from its header (422 past 100 megapixels), and an
 * image whose format the form lists in `imageCompressionType` re-encoded.
 */
export async function checkFile(
  arrived: ArrivedFile,
  compress: readonly string[],
): Promise<{ name: string; type: string; content: Buffer }> {
  const field = arrived.field.slice(0, 1_000);
  const name = cleanFileName(arrived.sentName);
  const type = await detectFileType(arrived.content, name);
  if (!type) throw invalid(field, "file type not allowed");
  let content = arrived.content;
  if (RASTER_IMAGES.has(type)) {
    const pixels = await declaredPixels(content);
    // The prebuilt image library has no HEVC decoder: a HEIC image is kept as sent, unchecked.
    if (pixels === null && type !== ACCEPTED_TYPES.heic) throw unreadable(field);
    if (pixels !== null && pixels > MAX_IMAGE_PIXELS) {
      throw invalid(field, `image must be at most ${MAX_IMAGE_PIXELS} pixels`);
    }
    const format = COMPRESSIBLE[type];
    if (format && compress.includes(format)) {
      content = await reencodeImage(content, format).catch(() => {
        throw unreadable(field);
      });
    }
  }
  return { name, type, content };
}

/** Checks the file and writes it to `spool`. */
export async function receiveFile(
  arrived: ArrivedFile,
  compress: readonly string[],
  spool: UploadSpool,
): Promise<ReceivedFile> {
  const digest = createHash("sha256").update(arrived.content).digest("base64url");
  const checked = await checkFile(arrived, compress);
  const id = newId("file");
  const stored = await spool.write(id, checked.content);
  return {
    id,
    field: arrived.field,
    name: checked.name,
    type: checked.type,
    size: checked.content.length,
    digest,
    content: () => readFile(stored),
  };
}
