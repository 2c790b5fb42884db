import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { invalid } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { SubmittedFile } from "../intake/intake-body.ts";
import type { ArrivedFile } from "../intake/multipart-body.ts";
import { diskSlices } from "./disk-slices.ts";
import { cleanFileName } from "./file-names.ts";
import { ACCEPTED_TYPES, detectFileType, RASTER_IMAGES } from "./file-types.ts";
import { COMPRESSIBLE, declaredPixels, MAX_IMAGE_PIXELS, reencodeImage } from "./images.ts";

/** A file accepted by check 6, waiting on disk for its submission to be stored. */
export interface ReceivedFile extends SubmittedFile {
  id: string;
  /** SHA-256 of the content as sent: an idempotent retry must send the same files. */
  digest: string;
  /**
   * The content as it will be stored, read from disk when the submission is, in slices of at
   * most `sliceBytes`: storing a file holds one slice in memory, not the file. The slices share
   * one buffer: each is valid until the next is asked for.
   */
  slices(sliceBytes: number): AsyncIterable<Buffer>;
}

/**
 * The files of one request, written to a private directory as they arrive and kept there until
 * they are stored, so that no file is ever held whole in memory; removed once the request is
 * answered.
 */
export class UploadSpool {
  private dir: Promise<string> | null = null;
  private disposed = false;
  private count = 0;

  /** A new file's path in the directory, made on first use. */
  async newFile(): Promise<string> {
    // A file still arriving when its request was refused must not make a directory anew.
    if (this.disposed) throw new Error("the upload was answered already");
    this.dir ??= mkdtemp(path.join(os.tmpdir(), "formdeck-upload-"));
    return path.join(await this.dir, String(++this.count));
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
 * image whose format the form lists in `imageCompressionType` re-encoded into a file beside it.
 */
export async function checkFile(
  arrived: ArrivedFile,
  compress: readonly string[],
): Promise<{ name: string; type: string; path: string; size: number }> {
  const field = arrived.field.slice(0, 1_000);
  const name = cleanFileName(arrived.sentName);
  const type = await detectFileType(arrived.path, name);
  if (!type) throw invalid(field, "file type not allowed");
  if (RASTER_IMAGES.has(type)) {
    const pixels = await declaredPixels(arrived.path);
    // The prebuilt image library has no HEVC decoder: a HEIC image is kept as sent, unchecked.
    if (pixels === null && type !== ACCEPTED_TYPES.heic) throw unreadable(field);
    if (pixels !== null && pixels > MAX_IMAGE_PIXELS) {
      throw invalid(field, `image must be at most ${MAX_IMAGE_PIXELS} pixels`);
    }
    const format = COMPRESSIBLE[type];
    if (format && compress.includes(format)) {
      const encoded = `${arrived.path}.${format}`;
      const size = await reencodeImage(arrived.path, encoded, format).catch(() => {
        throw unreadable(field);
      });
      return { name, type, path: encoded, size };
    }
  }
  return { name, type, path: arrived.path, size: arrived.size };
}

/** Checks the file, which stays on disk until its submission is stored. */
export async function receiveFile(
  arrived: ArrivedFile,
  compress: readonly string[],
): Promise<ReceivedFile> {
  const checked = await checkFile(arrived, compress);
  return {
    id: newId("file"),
    field: arrived.field,
    name: checked.name,
    type: checked.type,
    size: checked.size,
    digest: arrived.digest,
    slices: (sliceBytes) => diskSlices(checked.path, sliceBytes),
  };
}
