import { hasPngSignature } from "fast-png";
import type { PreparedImage } from "../catalogue/importLogo";
import { preparedFromPixels } from "../catalogue/preparedImage";
import { decodePngPixels, encodePng, pngHeader } from "../images/png";
import { manyColours, type Pixels } from "../images/renditions";
import { shrinkPixels } from "../images/shrink";
import { fail, ok, type Result } from "../lib/errors";
import { decodeBmpEntry, firstWorkingEntry, icoEntries, type IcoEntry } from "./ico";
import type { IconFormat } from "./sniff";

/**
 * Icons as pixels, in the Worker. sharp is Node-only, so:
 *  - PNG is decoded and every rendition encoded by fast-png (../images/png.ts);
 *  - ICO is read here (./ico.ts: PNG entries, and BMP entries with their AND mask), since
 *    the Images binding does not read ICO;
 *  - JPEG, GIF, WebP and AVIF go through the Images binding to PNG first;
 *  - SVG goes through the Images binding too, rasterised MAX_EDGE on its longer edge. Locally the binding
 *    (sharp) rasterises it; Cloudflare's binding does not rasterise SVG at all, so there the
 *    output is not a PNG, the candidate is refused, and a raster icon of the site wins.
 * Strangers' SVGs are never served: only the PNGs made from them are public.
 */
/** Largest edge of a discovered master: as large as any lookup serves, small enough to encode quickly. */
export const MAX_EDGE = 1200;
/**
 * Largest edge of a discovered master of many colours (../images/renditions.ts, manyColours): a
 * photograph, or a file of noise served to make the service work. Its master and renditions
 * are incompressible pixels, so every one of them, and the analysis that moves them, costs in
 * proportion to its area: at 384 px a tenth of 1,200 px, and half of 512 px (a manifest's largest
 * icon), which keeps a fresh isolate's first analysis well under 200 ms of CPU (npm run bench).
 * A lookup asking for more enlarges it at the edge. A logo of flat colours keeps MAX_EDGE.
 */
export const MANY_COLOURS_MAX_EDGE = 384;
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
    if (format === "png") return await decodePngIcon(images, bytes);
    if (format === "ico") return await decodeIcoIcon(images, bytes);
    const png = await throughImages(images, bytes, format === "svg");
    if (!png.ok) return png;
    const pixels = decodePngPixels(png.value, MAX_EDGE);
    if (!pixels.ok) return pixels;
    return ok({ pixels: pixels.value, sourceWidth: pixels.value.width, sourceHeight: pixels.value.height, vector: format === "svg" });
  } catch (error) {
    return fail("invalid_argument", `unreadable ${format}: ${(error as Error).message}`);
  }
}

async function decodePngIcon(images: ImagesBinding, bytes: Uint8Array): Promise<Result<DecodedIcon>> {
  const header = pngHeader(bytes);
  if (!header.ok) return header;
  const { width, height, depth, interlaced } = header.value;
  if (width === 0 || height === 0 || width > MAX_SOURCE_EDGE || height > MAX_SOURCE_EDGE)
    return fail("invalid_argument", `PNG of ${width}×${height} refused`);
  // A large raster is scaled down by the binding first: fewer pixels to decode and encode.
  // fast-png misreads interlaced images of under 8 bits a sample, so the binding redraws those too.
  const direct = Math.max(width, height) <= MAX_EDGE && !(interlaced && depth < 8);
  const png = direct ? ok(bytes) : await throughImages(images, bytes, false);
  if (!png.ok) return png;
  const pixels = decodePngPixels(png.value, MAX_EDGE);
  if (!pixels.ok) return pixels;
  return ok({ pixels: pixels.value, sourceWidth: width, sourceHeight: height, vector: false });
}

/**
 * An ICO's entries best first (./ico.ts), the first that decodes: one broken or lying entry
 * does not cost the favicon. A few are tried at most, each being a full decode.
 */
async function decodeIcoIcon(images: ImagesBinding, bytes: Uint8Array): Promise<Result<DecodedIcon>> {
  return firstWorkingEntry(
    icoEntries(bytes),
    (entry): Promise<Result<DecodedIcon>> | Result<DecodedIcon> =>
      entry.kind === "png" ? decodePngIcon(images, entry.data) : bmpIcon(entry),
    fail("invalid_argument", "ICO without a readable image"),
  );
}

function bmpIcon(entry: IcoEntry): Result<DecodedIcon> {
  const pixels = decodeBmpEntry(entry);
  if (!pixels) return fail("invalid_argument", "ICO entry of an unsupported kind");
  return ok({ pixels, sourceWidth: pixels.width, sourceHeight: pixels.height, vector: false });
}

/**
 * Other formats become a PNG inside MAX_EDGE × MAX_EDGE through the Images binding, rasters
 * only ever shrunk and SVGs drawn as large as fits. Both edges are bounded: a tall image given
 * only a width comes back as tall as it went.
 */
async function throughImages(images: ImagesBinding, bytes: Uint8Array, vector: boolean): Promise<Result<Uint8Array>> {
  try {
    const info = vector ? null : await images.info(streamOf(bytes));
    if (info && "width" in info && (info.width > MAX_SOURCE_EDGE || info.height > MAX_SOURCE_EDGE))
      return fail("invalid_argument", `image of ${info.width}×${info.height} refused`);
    const output = await images
      .input(streamOf(bytes))
      .transform({ width: MAX_EDGE, height: MAX_EDGE, fit: vector ? "contain" : "scale-down" })
      .output({ format: "image/png" });
    const png = new Uint8Array(await new Response(output.image()).arrayBuffer());
    if (!hasPngSignature(png))
      return fail("invalid_argument", vector ? "SVG could not be rasterised by the Images binding" : "image could not be converted to PNG");
    return ok(png);
  } catch (error) {
    return fail("invalid_argument", `the Images binding could not read it: ${(error as Error).message}`);
  }
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new Response(bytes).body!;
}

/**
 * The icon as the catalogue stores it: master, renditions, and the original file beside them. A
 * discovered icon of many colours is stored at most MANY_COLOURS_MAX_EDGE a side; an account's
 * own upload (`discovered: false`) keeps its size.
 */
export function prepareIcon(
  format: IconFormat,
  original: Uint8Array,
  icon: DecodedIcon,
  { discovered }: { discovered: boolean },
): Promise<PreparedImage> {
  return preparedFromPixels(format, original, discovered ? discoveredMaster(icon.pixels) : icon.pixels, encodePng);
}

/** A discovered icon's master: its pixels, or of many colours, at most MANY_COLOURS_MAX_EDGE a side. */
export function discoveredMaster(pixels: Pixels): Pixels {
  const bounded = Math.max(pixels.width, pixels.height) > MANY_COLOURS_MAX_EDGE && manyColours(pixels);
  return bounded ? shrinkPixels(pixels, MANY_COLOURS_MAX_EDGE) : pixels;
}
