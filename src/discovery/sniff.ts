/**
 * What a fetched file is, by its first bytes: sites label icons wrongly often enough
 * (`text/html` favicons, `image/png` ICOs) that Content-Type decides nothing.
 */
export type IconFormat = "png" | "jpeg" | "gif" | "webp" | "avif" | "ico" | "svg";

const startsWith = (bytes: Uint8Array, signature: number[], offset = 0) => signature.every((b, i) => bytes[offset + i] === b);
const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

export function sniffFormat(bytes: Uint8Array): IconFormat | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a") return "gif";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP") return "webp";
  if (ascii(bytes, 4, 8) === "ftyp" && /^avi[fs]$/.test(ascii(bytes, 8, 12))) return "avif";
  // ICONDIR: reserved 0, type 1 (icon), at least one image.
  if (startsWith(bytes, [0, 0, 1, 0]) && bytes.length >= 22 && (bytes[4]! | (bytes[5]! << 8)) > 0) return "ico";
  if (looksLikeSvg(bytes)) return "svg";
  return null;
}

/** An XML document whose root element is `svg`: past a BOM, the XML declaration, comments and a doctype. */
function looksLikeSvg(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 4096)).replace(/^\uFEFF/, "");
  const prologue = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*/i.exec(head)?.[0] ?? "";
  return /^<svg[\s>]/i.test(head.slice(prologue.length));
}
