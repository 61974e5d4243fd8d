import type { Pixels } from "../images/renditions";

/**
 * ICO files (the favicon.ico of most sites), read here because the Images binding does not
 * read ICO. An ICO is a directory of images: PNG entries are whole PNG files; BMP entries are
 * a DIB (BITMAPINFOHEADER, palette, pixels bottom-up) twice as tall as the image, the second
 * half being the 1-bit AND mask that marks transparent pixels. Written here rather than taken
 * from a package: the maintained ones build on a canvas `ImageData` global, which workerd
 * does not have.
 */
export interface IcoEntry {
  kind: "png" | "bmp";
  width: number;
  height: number;
  bitCount: number;
  data: Uint8Array;
}

/** Icons are at most 256 px; anything past this is refused before a pixel is allocated. */
const MAX_EDGE = 1024;
const MAX_ENTRIES = 64;

export function icoEntries(bytes: Uint8Array): IcoEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 6 || view.getUint16(0, true) !== 0 || view.getUint16(2, true) !== 1) return [];
  const count = Math.min(view.getUint16(4, true), MAX_ENTRIES);
  const entries: IcoEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = 6 + 16 * i;
    if (at + 16 > bytes.byteLength) break;
    const size = view.getUint32(at + 8, true);
    const offset = view.getUint32(at + 12, true);
    if (offset + size > bytes.byteLength || size < 40) continue;
    const data = bytes.subarray(offset, offset + size);
    const entryView = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] === 0x89 && data[1] === 0x50 && data[2] === 0x4e && data[3] === 0x47) {
      // The size is IHDR's, and IHDR must be the first chunk (PNG §5.6): any other there declares a size of its choosing.
      const isIhdr = String.fromCharCode(...data.subarray(12, 16)) === "IHDR";
      const width = entryView.getUint32(16);
      const height = entryView.getUint32(20);
      if (!isIhdr || width === 0 || height === 0 || width > MAX_EDGE || height > MAX_EDGE) continue;
      entries.push({ kind: "png", width, height, bitCount: 32, data });
      continue;
    }
    if (entryView.getUint32(0, true) < 40) continue;
    const width = entryView.getInt32(4, true);
    const height = entryView.getInt32(8, true) / 2;
    if (width <= 0 || height <= 0 || !Number.isInteger(height) || width > MAX_EDGE || height > MAX_EDGE) continue;
    entries.push({ kind: "bmp", width, height, bitCount: entryView.getUint16(14, true), data });
  }
  return entries;
}

/** ICO entries tried, best first, before the file is refused: each is a full decode. */
const MAX_ICO_TRIES = 4;

/** The entries in the order to try them: the largest, then the deepest colour. */
export function entriesBestFirst(entries: IcoEntry[]): IcoEntry[] {
  return [...entries].sort((a, b) => b.width * b.height - a.width * a.height || b.bitCount - a.bitCount);
}

/**
 * What `attempt` makes of the first entry it can, trying them best first, at most
 * MAX_ICO_TRIES: one broken or lying entry does not cost the favicon. When none works, the best
 * entry's refusal, or `none` without entries.
 */
export async function firstWorkingEntry<T extends { ok: boolean }>(
  entries: IcoEntry[],
  attempt: (entry: IcoEntry) => T | Promise<T>,
  none: T,
): Promise<T> {
  let refusal = none;
  for (const [i, entry] of entriesBestFirst(entries).slice(0, MAX_ICO_TRIES).entries()) {
    const tried = await attempt(entry);
    if (tried.ok) return tried;
    if (i === 0) refusal = tried;
  }
  return refusal;
}

/** A BMP entry as RGBA; null when its header or its data do not add up. */
export function decodeBmpEntry(entry: IcoEntry): Pixels | null {
  const { data, width, height, bitCount } = entry;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const headerSize = view.getUint32(0, true);
  const compression = view.getUint32(16, true);
  // BI_RGB only (BI_BITFIELDS 32-bit icons use the standard masks, so they read the same).
  if (compression !== 0 && !(compression === 3 && bitCount === 32)) return null;
  if (![1, 4, 8, 24, 32].includes(bitCount)) return null;
  const paletteSize = bitCount <= 8 ? view.getUint32(32, true) || 1 << bitCount : 0;
  const paletteAt = headerSize + (compression === 3 ? 12 : 0);
  const pixelsAt = paletteAt + paletteSize * 4;
  const rowBytes = Math.ceil((width * bitCount) / 32) * 4;
  const maskRowBytes = Math.ceil(width / 32) * 4;
  const maskAt = pixelsAt + rowBytes * height;
  if (maskAt > data.byteLength) return null;
  const hasMask = maskAt + maskRowBytes * height <= data.byteLength;

  const out = new Uint8Array(width * height * 4);
  let anyAlpha = false;
  for (let y = 0; y < height; y++) {
    const row = pixelsAt + (height - 1 - y) * rowBytes;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      let b: number,
        g: number,
        r: number,
        a = 255;
      if (bitCount === 32 || bitCount === 24) {
        const p = row + x * (bitCount / 8);
        [b, g, r] = [data[p]!, data[p + 1]!, data[p + 2]!];
        if (bitCount === 32) {
          a = data[p + 3]!;
          if (a !== 0) anyAlpha = true;
        }
      } else {
        const bit = x * bitCount;
        const index = (data[row + (bit >> 3)]! >> (8 - bitCount - (bit & 7))) & ((1 << bitCount) - 1);
        const p = paletteAt + Math.min(index, paletteSize - 1) * 4;
        [b, g, r] = [data[p]!, data[p + 1]!, data[p + 2]!];
      }
      out[o] = r;
      out[o + 1] = g;
      out[o + 2] = b;
      out[o + 3] = a;
    }
  }
  // A 32-bit image whose alpha is all zero is an old one that relies on its mask.
  if (bitCount === 32 && !anyAlpha) for (let i = 3; i < out.length; i += 4) out[i] = 255;
  // The AND mask marks transparency, except for 32-bit images that carry their own alpha.
  if (hasMask && !(bitCount === 32 && anyAlpha)) {
    for (let y = 0; y < height; y++) {
      const row = maskAt + (height - 1 - y) * maskRowBytes;
      for (let x = 0; x < width; x++) {
        if ((data[row + (x >> 3)]! >> (7 - (x & 7))) & 1) out[(y * width + x) * 4 + 3] = 0;
      }
    }
  }
  return { width, height, channels: 4, data: out };
}
