import { Unzlib } from "fflate";
import { convertIndexedToRgb, type DecodedPng, decode as decodePng, encode as encodePngPixels, hasPngSignature } from "fast-png";
import { fail, ok, type Result } from "../lib/errors";
import type { Pixels } from "./renditions";

/**
 * The Worker's PNG codec (sharp is Node-only): fast-png, pure JS with zlib by fflate, behind
 * the checks that keep a hostile file from costing the isolate its memory. Discovery decodes
 * strangers' icons with it (decodePngPixels); the asset route decodes the catalogue's own
 * renditions to make their greyscale (decodeStoredPng, ./greyOnDemand.ts).
 */

/** Samples a pixel by colour type, and the bit depths each allows (PNG §11.2.2, Table 11.1). */
const COLOUR_TYPES = new Map([
  [0, { channels: 1, depths: [1, 2, 4, 8, 16] }],
  [2, { channels: 3, depths: [8, 16] }],
  [3, { channels: 1, depths: [1, 2, 4, 8] }],
  [4, { channels: 2, depths: [8, 16] }],
  [6, { channels: 4, depths: [8, 16] }],
]);
/**
 * The chunks pixels are made of (§5.6); the rest, iCCP among them (which fast-png inflates with
 * no limit), are dropped. PLTE counts only for indexed colour: elsewhere it is a suggestion
 * (§11.2.3) that fast-png would take for the image's palette; tRNS is not allowed with alpha.
 */
const pixelChunks = (colourType: number) =>
  new Set(["IHDR", "IDAT", "IEND", ...(colourType === 3 ? ["PLTE"] : []), ...(colourType === 4 || colourType === 6 ? [] : ["tRNS"])]);
/** Compressed bytes inflated at a time: deflate expands at most ~1,032:1, so one step stays near 4 MB. */
const INFLATE_STEP = 4096;
/** Adam7's seven passes as [x0, y0, dx, dy] (§8.2). */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

export interface PngHeader {
  width: number;
  height: number;
  depth: number;
  colourType: number;
  channels: number;
  interlaced: boolean;
}

const chunkType = (bytes: Uint8Array, at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);

/** The size a PNG declares, read only where the format puts it: IHDR, the first chunk after the signature (§5.2, §5.6). */
export function pngHeader(bytes: Uint8Array): Result<PngHeader> {
  if (bytes.length < 33 || !hasPngSignature(bytes)) return fail("invalid_argument", "not a PNG");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(8) !== 13 || chunkType(bytes, 12) !== "IHDR") return fail("invalid_argument", "PNG whose first chunk is not IHDR");
  const [depth, colourType, compression, filter, interlace] = bytes.subarray(24, 29);
  const colour = COLOUR_TYPES.get(colourType!);
  if (!colour?.depths.includes(depth!) || compression !== 0 || filter !== 0 || interlace! > 1)
    return fail("invalid_argument", "PNG header of an unknown kind");
  return ok({
    width: view.getUint32(16),
    height: view.getUint32(20),
    depth: depth!,
    colourType: colourType!,
    channels: colour.channels,
    interlaced: interlace === 1,
  });
}

/** Bytes the image data inflates to: a filter byte and the packed samples of each row of each pass (§7.2, §8.2). */
function inflatedSize({ width, height, depth, channels, interlaced }: PngHeader): number {
  const rowBytes = (w: number) => Math.ceil((w * depth * channels) / 8);
  if (!interlaced) return height * (1 + rowBytes(width));
  let total = 0;
  for (const [x0, y0, dx, dy] of ADAM7) {
    const w = Math.ceil((width - x0) / dx);
    const h = Math.ceil((height - y0) / dy);
    if (w > 0 && h > 0) total += h * (1 + rowBytes(w));
  }
  return total;
}

/**
 * A PNG of at most `maxEdge` a side as 8-bit RGBA, never through the binding. fast-png inflates
 * the image data whole, however much it is, and believes the last IHDR it meets; a small file
 * could so claim gigabytes, and the Worker's 128 MB kills the isolate and the Durable Object in
 * it. So the data is first inflated a step at a time, counted and dropped, and refused past what
 * the header declares; fast-png then reads a copy holding only the chunks pixels are made of.
 */
export function decodePngPixels(bytes: Uint8Array, maxEdge: number): Result<Pixels> {
  const header = pngHeader(bytes);
  if (!header.ok) return header;
  const { width, height } = header.value;
  if (width === 0 || height === 0 || width > maxEdge || height > maxEdge)
    return fail("invalid_argument", `PNG of ${width}×${height} refused`);
  if (header.value.interlaced && header.value.depth < 8) return fail("invalid_argument", "interlaced PNG of under 8 bits a sample");
  const limit = inflatedSize(header.value);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const keep = pixelChunks(header.value.colourType);
  const kept: Uint8Array[] = [bytes.subarray(0, 8)];
  let inflated = 0;
  try {
    const inflator = new Unzlib((chunk) => void (inflated += chunk.length));
    let ended = false;
    for (let at = 8; !ended; ) {
      if (at + 12 > bytes.length) return fail("invalid_argument", "PNG cut short");
      const type = chunkType(bytes, at + 4);
      const dataAt = at + 8;
      const next = dataAt + view.getUint32(at) + 4;
      if (next > bytes.length) return fail("invalid_argument", "PNG cut short");
      if (type === "IHDR" && at !== 8) return fail("invalid_argument", "PNG with a second IHDR");
      if (type === "IDAT") {
        for (let step = dataAt; step < next - 4 && inflated <= limit; step += INFLATE_STEP)
          inflator.push(bytes.subarray(step, Math.min(step + INFLATE_STEP, next - 4)));
      }
      if (inflated > limit)
        return fail("invalid_argument", `PNG data inflating past the ${limit} bytes its ${width}×${height} header declares`);
      if (keep.has(type)) kept.push(bytes.subarray(at, next));
      ended = type === "IEND";
      at = next;
    }
    inflator.push(new Uint8Array(0), true);
    if (inflated > limit)
      return fail("invalid_argument", `PNG data inflating past the ${limit} bytes its ${width}×${height} header declares`);
  } catch (error) {
    return unreadable(error);
  }
  return rgbaOf(concat(kept), header.value);
}

/**
 * A PNG the catalogue wrote itself (a stored rendition) as 8-bit RGBA, of at most `maxPixels`:
 * fast-png straight away. decodePngPixels' counting pass guards against strangers' files, and
 * would inflate the image data twice.
 */
export function decodeStoredPng(bytes: Uint8Array, maxPixels: number): Result<Pixels> {
  const header = pngHeader(bytes);
  if (!header.ok) return header;
  const { width, height } = header.value;
  if (width * height > maxPixels) return fail("invalid_argument", `PNG of ${width}×${height} is over ${maxPixels} pixels`);
  return rgbaOf(bytes, header.value);
}

/** fast-png's decoding of a PNG whose header was read, as 8-bit RGBA: the last step of both decoders above. */
function rgbaOf(png: Uint8Array, { width, height }: PngHeader): Result<Pixels> {
  try {
    const decoded = decodePng(png);
    if (decoded.width !== width || decoded.height !== height)
      return fail("invalid_argument", "PNG decoded to another size than its header");
    return ok(toRgba(decoded));
  } catch (error) {
    return unreadable(error);
  }
}

const unreadable = (error: unknown) => fail("invalid_argument", `unreadable png: ${(error as Error).message}`);

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * fast-png's output in any colour type and depth → 8-bit RGBA. Samples under 8 bits come packed
 * (rows whole bytes) and scale by 255 / (2^depth − 1); 16-bit ones keep their high byte (§13.12).
 * A tRNS colour key makes matching greyscale or truecolour pixels transparent (§11.3.2.1).
 */
function toRgba(png: DecodedPng): Pixels {
  const { width, height } = png;
  let channels = png.channels;
  let depth: number = png.depth;
  let data: ArrayLike<number> = png.data;
  let key: ArrayLike<number> | undefined = png.transparency;
  if (png.palette) {
    data = convertIndexedToRgb(png);
    channels = png.palette[0]?.length ?? 3;
    depth = 8;
    key = undefined;
  }
  if (channels === 4 && depth === 8 && data instanceof Uint8Array) return { width, height, channels: 4, data };
  if (depth < 8) data = unpackSamples(data, width * channels, height, depth);
  const scale =
    depth === 16 ? (v: number) => v >> 8 : depth === 8 ? (v: number) => v : (v: number) => Math.round((v * 255) / (2 ** depth - 1));
  const colourKey = key?.length === channels && (channels === 1 || channels === 3) ? key : null;
  const out = new Uint8Array(width * height * 4);
  for (let i = 0, at = 0, o = 0; i < width * height; i++, at += channels, o += 4) {
    if (channels >= 3) {
      out[o] = scale(data[at]!);
      out[o + 1] = scale(data[at + 1]!);
      out[o + 2] = scale(data[at + 2]!);
      out[o + 3] = channels === 4 ? scale(data[at + 3]!) : 255;
    } else {
      out[o] = out[o + 1] = out[o + 2] = scale(data[at]!);
      out[o + 3] = channels === 2 ? scale(data[at + 1]!) : 255;
    }
    if (colourKey && data[at] === colourKey[0] && (channels === 1 || (data[at + 1] === colourKey[1] && data[at + 2] === colourKey[2])))
      out[o + 3] = 0;
  }
  return { width, height, channels: 4, data: out };
}

/** Packed samples of `depth` bits, rows starting on a byte, as one value a sample. */
function unpackSamples(packed: ArrayLike<number>, samplesPerRow: number, rows: number, depth: number): Uint8Array {
  const rowBytes = Math.ceil((samplesPerRow * depth) / 8);
  const mask = (1 << depth) - 1;
  const out = new Uint8Array(samplesPerRow * rows);
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < samplesPerRow; x++) {
      const bit = x * depth;
      out[y * samplesPerRow + x] = (packed[y * rowBytes + (bit >> 3)]! >> (8 - depth - (bit & 7))) & mask;
    }
  }
  return out;
}

/** fast-png at zlib level 6. */
export function encodePng(pixels: Pixels): Uint8Array {
  return encodePngPixels(
    { width: pixels.width, height: pixels.height, data: pixels.data, channels: pixels.channels, depth: 8 },
    { zlib: { level: 6 } },
  );
}
