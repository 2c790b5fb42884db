import type sharpLibrary from "sharp";
import { TaskSlots } from "../task-slots.ts";
import { ACCEPTED_TYPES, type AcceptedType } from "./file-types.ts";

/** Larger images would take gigabytes to decode: refused from their header, never decoded. */
export const MAX_IMAGE_PIXELS = 100_000_000;
export const MAX_IMAGE_SIDE = 4_096;
export const IMAGE_QUALITY = 80;

let library: Promise<typeof sharpLibrary> | null = null;

/**
 * The image library, loaded with the first image an upload carries: its native code and
 * JavaScript (about 20 MB resident) stay out of an instance that never receives one.
 */
function imageLibrary(): Promise<typeof sharpLibrary> {
  library ??= import("sharp").then(({ default: sharp }) => {
    // Decoded images are not kept for reuse: each upload is decoded once.
    sharp.cache(false);
    return sharp;
  });
  return library;
}

/**
 * Re-encodings at once. sharp works on libuv's threads, off the event loop; the bound keeps a
 * burst of uploads from taking every thread and all the memory that decoding needs.
 */
const encodings = new TaskSlots(2);

/** The forms' `imageCompressionType` names, by the detected type they re-encode. */
export const COMPRESSIBLE: Partial<Record<AcceptedType, "png" | "jpeg" | "webp">> = {
  [ACCEPTED_TYPES.png]: "png",
  [ACCEPTED_TYPES.jpeg]: "jpeg",
  [ACCEPTED_TYPES.webp]: "webp",
};

/**
 * The pixels the image in the file would decode to, every frame counted, read from its header
 * alone; null when the header cannot be read.
 */
export async function declaredPixels(file: string): Promise<number | null> {
  const sharp = await imageLibrary();
  try {
    const header = await sharp(file, { limitInputPixels: false }).metadata();
    if (!header.width || !header.height) return null;
    const frameHeight = header.pageHeight ?? header.height;
    return header.width * frameHeight * (header.pages ?? 1);
  } catch {
    return null;
  }
}

/**
 * The image of file `from` re-encoded in its own format into file `to`: turned upright, its
 * longest side at most 4,096 px, quality 80 (PNG: lossless, at full compression), and without its
 * metadata (EXIF, GPS, XMP, ICC profile), which sharp drops unless asked to keep it. Resolves to
 * the new file's size; rejects when the image is truncated or corrupt.
 */
export function reencodeImage(
  from: string,
  to: string,
  format: "png" | "jpeg" | "webp",
): Promise<number> {
  return encodings.run(async () => {
    const sharp = await imageLibrary();
    const image = sharp(from, {
      limitInputPixels: MAX_IMAGE_PIXELS,
      animated: format === "webp",
      failOn: "truncated",
    })
      .autoOrient()
      .resize({
        width: MAX_IMAGE_SIDE,
        height: MAX_IMAGE_SIDE,
        fit: "inside",
        withoutEnlargement: true,
      });
    const encoded =
      format === "png"
        ? image.png({ compressionLevel: 9 })
        : format === "jpeg"
          ? image.jpeg({ quality: IMAGE_QUALITY, mozjpeg: true })
          : image.webp({ quality: IMAGE_QUALITY });
    return (await encoded.toFile(to)).size;
  });
}
