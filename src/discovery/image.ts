import { decode as decodePng, encode as encodePngPixels, convertIndexedToRgb } from "fast-png";
import type { PreparedImage } from "../catalogue/importLogo";
import { preparedFromPixels } from "../catalogue/preparedImage";
import type { Pixels } from "../images/renditions";
import { fail, ok, type Result } from "../lib/errors";
import { decodeBmpEntry, icoEntries, largestEntry } from "./ico";
import type { IconFormat } from "./sniff";

/**
 * Icons as pixels, in the Worker. sharp is Node-only, so:
 *  - PNG is decoded and every rendition encoded by fast-png (pure JS, zlib by fflate);
 *  - ICO is read here (./ico.ts: PNG entries, and BMP entries with their AND mask), since
 *    the Images binding does not read ICO;
 *  - JPEG, GIF, WebP and AVIF go through the Images binding to PNG first;
 *  - SVG goes through the Images binding too, rasterised MAX_EDGE wide. Locally the binding
 *    (sharp) rasterises it; Cloudflare's binding does not rasterise SVG at all, so there the
 *    output is not a PNG, the candidate is refused, and a raster icon of the site wins.
 * Strangers' SVGs are never served: only the PNGs made from them are public.
 */
/** Largest edge of a discovered master: as large as any lookup serves, small enough to encode quickly. */
export const MAX_EDGE = 1200;
/** Largest source decoded at all: an icon declaring more is refused before any pixel is allocated. */
const MAX_SOURCE_EDGE = 4096;

export interface DecodedIcon {
  pixels: Pixels;
  /** The edge sizes of the file as it came, before any scaling. */
  sourceWidth: number;
  sourceHeight: number;
  vector: boolean;
}

export async function decodeIcon(images: ImagesBinding, bytes: Uint8Array, format: IconFormat): Promise<Result<DecodedIcon>> {
  try {
    if (format === "png") return await decodePngIcon(images, bytes, false);
    if (format === "ico") return await decodeIcoIcon(images, bytes);
    const png = await throughImages(images, bytes, format === "svg");
    if (!png.ok) return png;
    return await decodePngIcon(images, png.value, format === "svg");
  } catch (error) {
    return fail("invalid_argument", `unreadable ${format}: ${(error as Error).message}`);
  }
}

function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

async function decodePngIcon(images: ImagesBinding, bytes: Uint8Array, vector: boolean): Promise<Result<DecodedIcon>> {
  const { width, height } = pngSize(bytes);
  if (width === 0 || height === 0 || width > MAX_SOURCE_EDGE || height > MAX_SOURCE_EDGE) return fail("invalid_argument", `PNG of ${width}×${height} refused`);
  // A large raster is scaled down by the binding first: fewer pixels to decode and encode.
  if (Math.max(width, height) > MAX_EDGE) {
    const scaled = await throughImages(images, bytes, false);
    if (!scaled.ok) return scaled;
    const decoded = await decodePngIcon(images, scaled.value, vector);
    return decoded.ok ? ok({ ...decoded.value, sourceWidth: width, sourceHeight: height }) : decoded;
  }
  return ok({ pixels: toRgba(decodePng(bytes)), sourceWidth: width, sourceHeight: height, vector });
}

/** The largest entry of an ICO (then the deepest colour), decoded. */
async function decodeIcoIcon(images: ImagesBinding, bytes: Uint8Array): Promise<Result<DecodedIcon>> {
  const best = largestEntry(icoEntries(bytes));
  if (!best) return fail("invalid_argument", "ICO without a readable image");
  if (best.kind === "png") return decodePngIcon(images, best.data, false);
  const pixels = decodeBmpEntry(best);
  if (!pixels) return fail("invalid_argument", "ICO entry of an unsupported kind");
  return ok({ pixels, sourceWidth: pixels.width, sourceHeight: pixels.height, vector: false });
}

/** Other formats become a PNG at most MAX_EDGE wide through the Images binding; SVGs are drawn that wide. */
async function throughImages(images: ImagesBinding, bytes: Uint8Array, vector: boolean): Promise<Result<Uint8Array>> {
  const info = vector ? null : await images.info(streamOf(bytes));
  if (info && "width" in info && (info.width > MAX_SOURCE_EDGE || info.height > MAX_SOURCE_EDGE)) return fail("invalid_argument", `image of ${info.width}×${info.height} refused`);
  const width = vector ? MAX_EDGE : Math.min(MAX_EDGE, info && "width" in info ? info.width : MAX_EDGE);
  const output = await images
    .input(streamOf(bytes))
    .transform({ width, fit: vector ? "contain" : "scale-down" })
    .output({ format: "image/png" });
  const png = new Uint8Array(await new Response(output.image()).arrayBuffer());
  const isPng = png[0] === 0x89 && png[1] === 0x50 && png[2] === 0x4e && png[3] === 0x47;
  if (!isPng) return fail("invalid_argument", vector ? "SVG could not be rasterised by the Images binding" : "image could not be converted to PNG");
  return ok(png);
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new Response(bytes).body!;
}

/** fast-png's output in any colour type and depth → 8-bit RGBA. */
function toRgba(png: ReturnType<typeof decodePng>): Pixels {
  const { width, height } = png;
  const count = width * height;
  let channels = png.channels;
  let data: ArrayLike<number> = png.data;
  let shift = png.depth === 16 ? 8 : 0;
  if (png.palette) {
    data = convertIndexedToRgb(png);
    channels = png.palette[0]?.length ?? 3;
    shift = 0;
  }
  if (channels === 4 && shift === 0 && data instanceof Uint8Array) return { width, height, channels: 4, data };
  const out = new Uint8Array(count * 4);
  for (let i = 0; i < count; i++) {
    const at = i * channels;
    const o = i * 4;
    if (channels >= 3) {
      out[o] = data[at]! >> shift;
      out[o + 1] = data[at + 1]! >> shift;
      out[o + 2] = data[at + 2]! >> shift;
      out[o + 3] = channels === 4 ? data[at + 3]! >> shift : 255;
    } else {
      const grey = data[at]! >> shift;
      out[o] = out[o + 1] = out[o + 2] = grey;
      out[o + 3] = channels === 2 ? data[at + 1]! >> shift : 255;
    }
  }
  return { width, height, channels: 4, data: out };
}

/** fast-png at zlib level 6, as the importer encodes with sharp. */
export function encodePng(pixels: Pixels): Uint8Array {
  return encodePngPixels({ width: pixels.width, height: pixels.height, data: pixels.data, channels: pixels.channels, depth: 8 }, { zlib: { level: 6 } });
}

/** The icon as the catalogue stores it: master, renditions, and the original file beside them. */
export function prepareIcon(format: IconFormat, original: Uint8Array, icon: DecodedIcon): Promise<PreparedImage> {
  return preparedFromPixels(format, original, icon.pixels, encodePng);
}
