/** The most bytes of UTF-8 a file name keeps. */
export const MAX_FILE_NAME_BYTES = 255;

// Control characters (C0, DEL, C1), the bidirectional overrides and isolates that make a name
// read differently from what it is ("invoice\u202Efdp.exe"), and both path separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069/\\]/g;

/**
 * A file name as sent, fit for display only: it never becomes a path. Unsafe characters are
 * removed, a lone surrogate is replaced, and the name is cut to 255 bytes on a character boundary.
 * A name left empty becomes "file".
 */
export function cleanFileName(sent: string): string {
  const cleaned = sent.toWellFormed().replace(UNSAFE, "").trim();
  let bytes = 0;
  let kept = "";
  for (const char of cleaned) {
    bytes += Buffer.byteLength(char);
    if (bytes > MAX_FILE_NAME_BYTES) break;
    kept += char;
  }
  return kept === "" ? "file" : kept;
}

/** The name's extension, lower case, without the dot ("" when it has none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}
