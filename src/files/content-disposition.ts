/** Characters RFC 8187 lets stand unencoded in an extended value (attr-char). */
const ATTR_CHAR = /[A-Za-z0-9!#$&+.^_`|~-]/;

function extendedValue(name: string): string {
  let encoded = "";
  for (const byte of Buffer.from(name, "utf8")) {
    const char = String.fromCharCode(byte);
    encoded +=
      byte < 0x80 && ATTR_CHAR.test(char)
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return encoded;
}

/**
 * `Content-Disposition: attachment` naming the file (RFC 6266): `filename*` with the name in
 * UTF-8, and `filename` with an ASCII stand-in for clients that do not read the former (every
 * other character, the quote and the backslash become `_`).
 */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${extendedValue(name)}`;
}
