import { fileTypeFromFile } from "file-type";
import { diskSlices } from "./disk-slices.ts";
import { extensionOf } from "./file-names.ts";

/** The types a submission may carry, as detected; images are those sharp can read. */
export const ACCEPTED_TYPES = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  heic: "image/heic",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
} as const;

export type AcceptedType = (typeof ACCEPTED_TYPES)[keyof typeof ACCEPTED_TYPES];

/** What file-type reports, by extension, for the types taken from their magic bytes alone. */
const BY_MAGIC: Record<string, AcceptedType> = {
  png: ACCEPTED_TYPES.png,
  jpg: ACCEPTED_TYPES.jpeg,
  gif: ACCEPTED_TYPES.gif,
  webp: ACCEPTED_TYPES.webp,
  avif: ACCEPTED_TYPES.avif,
  heic: ACCEPTED_TYPES.heic,
  pdf: ACCEPTED_TYPES.pdf,
  docx: ACCEPTED_TYPES.docx,
  xlsx: ACCEPTED_TYPES.xlsx,
};

/** How much of an svg's text decides its root element: the prolog before it must fit. */
const SVG_HEAD_CHARACTERS = 1024 * 1024;

/** How much of a text file is read at once to check that it is UTF-8. */
const TEXT_SLICE_BYTES = 64 * 1024;

/**
 * The file's text when it is all valid UTF-8, read as it streams: only its first
 * `keepCharacters` are kept (what an svg's root is judged on), so that checking a large text
 * file holds none of it whole. Null when a byte sequence is not UTF-8.
 */
async function utf8Head(file: string, keepCharacters: number): Promise<string | null> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let head = "";
  try {
    for await (const chunk of diskSlices(file, TEXT_SLICE_BYTES)) {
      const text = decoder.decode(chunk, { stream: true });
      if (head.length < keepCharacters) head += text.slice(0, keepCharacters - head.length);
    }
    decoder.decode();
  } catch {
    return null;
  }
  return head;
}

/** Where the prolog construct at `at` ends (the index after it), or -1 when it never does. */
function endOfConstruct(text: string, at: number): number {
  const closeAt = (closing: string, from: number) => {
    const found = text.indexOf(closing, from);
    return found === -1 ? -1 : found + closing.length;
  };
  if (text.startsWith("<?", at)) return closeAt("?>", at);
  if (text.startsWith("<!--", at)) return closeAt("-->", at);
  // A doctype's internal subset holds '>' of its own: it ends at the '>' after its ']'.
  const bracket = text.indexOf("[", at);
  const close = text.indexOf(">", at);
  if (bracket !== -1 && bracket < close) {
    const subsetEnd = text.indexOf("]", bracket);
    return subsetEnd === -1 ? -1 : closeAt(">", subsetEnd);
  }
  return close === -1 ? -1 : close + 1;
}

/**
 * Whether the document's root element is `<svg`: after a byte order mark, white space, the XML
 * declaration, processing instructions, comments and a doctype. A scan, not a parse: nothing in
 * the file is expanded or fetched.
 */
export function hasSvgRoot(text: string): boolean {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at] as string)) at++;
    const construct =
      text.startsWith("<?", at) ||
      text.startsWith("<!--", at) ||
      /^<!doctype/i.test(text.slice(at, at + 9));
    if (!construct) break;
    at = endOfConstruct(text, at);
    if (at === -1) return false;
  }
  return /^<svg[\s>/]/.test(text.slice(at, at + 5));
}

/**
 * The type of the file at `file`, from its content: magic bytes for binary formats; for the text
 * formats, which have none, the name's extension (svg, csv, txt) and text that is valid UTF-8
 * (with an `<svg` root for svg); Word and Excel 97 files share their container (CFB), which the
 * extension tells apart. Null: not a type a submission may carry.
 */
export async function detectFileType(file: string, name: string): Promise<AcceptedType | null> {
  const detected = await fileTypeFromFile(file);
  const extension = extensionOf(name);
  if (detected) {
    const byMagic = BY_MAGIC[detected.ext];
    if (byMagic) return byMagic;
    if (detected.ext === "cfb" && (extension === "doc" || extension === "xls")) {
      return ACCEPTED_TYPES[extension];
    }
    // An SVG that starts with an XML declaration is reported as XML.
    if (detected.ext !== "xml") return null;
  }
  if (extension !== "svg" && extension !== "csv" && extension !== "txt") return null;
  const text = await utf8Head(file, extension === "svg" ? SVG_HEAD_CHARACTERS : 0);
  if (text === null) return null;
  if (extension === "svg" && !hasSvgRoot(text)) return null;
  return ACCEPTED_TYPES[extension];
}

/** Images whose header sharp reads: their pixel count is checked before anything decodes them. */
export const RASTER_IMAGES: ReadonlySet<AcceptedType> = new Set([
  ACCEPTED_TYPES.png,
  ACCEPTED_TYPES.jpeg,
  ACCEPTED_TYPES.gif,
  ACCEPTED_TYPES.webp,
  ACCEPTED_TYPES.avif,
  ACCEPTED_TYPES.heic,
]);
