/** The most bytes of UTF-8 a file name keeps. */
export const MAX_FILE_NAME_BYTES = 255;

// Control characters (C0, DEL, C1), the bidirectional overrides and isolates that make a name
// read differently from what it is ("invoice\u202Efdp.exe"), and both path separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069/\\]/g;

/** The longest ending after a dot that a cut name keeps as its extension, in bytes. */
const MAX_EXTENSION_BYTES = 16;

/** The longest start of `text` that fits in `limit` bytes of UTF-8, cut on a character boundary. */
function cutToBytes(text: string, limit: number): string {
  let bytes = 0;
  let kept = "";
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > limit) break;
    kept += char;
  }
  return kept;
}

/**
 * A file name as sent, fit for display only: it never becomes a path. Unsafe characters are
 * removed, a lone surrogate is replaced, and a name over 255 bytes is cut on a character boundary
 * before its extension, which it keeps: the name still says what the file is, and the text types
 * (svg, csv, txt) are told by it. A name left empty becomes "file".
 */
export function cleanFileName(sent: string): string {
  const cleaned = sent.toWellFormed().replace(UNSAFE, "").trim();
  if (cleaned === "") return "file";
  if (Buffer.byteLength(cleaned) <= MAX_FILE_NAME_BYTES) return cleaned;
  const dot = cleaned.lastIndexOf(".");
  const extension = dot > 0 ? cleaned.slice(dot) : "";
  if (extension === "" || Buffer.byteLength(extension) > MAX_EXTENSION_BYTES) {
    return cutToBytes(cleaned, MAX_FILE_NAME_BYTES);
  }
  const stem = cutToBytes(
    cleaned.slice(0, dot),
    MAX_FILE_NAME_BYTES - Buffer.byteLength(extension),
  );
  return stem + extension;
}

/** The name's extension, lower case, without the dot ("" when it has none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}
