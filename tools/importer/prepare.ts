import sharp, { type Metadata, type Sharp } from "sharp";
import type { PreparedImage } from "../../src/catalogue/importLogo";
import { type PrepareOptions, preparedFromPixels } from "../../src/catalogue/preparedImage";
import { decodeBmpEntry, firstWorkingEntry, icoEntries } from "../../src/discovery/ico";
import { sniffFormat } from "../../src/discovery/sniff";
import { encodePng } from "./png";
import { svgTooCostly } from "./svgCost";

/**
 * Image work at import time (Node side: sharp decodes, ./png.ts encodes), so that the edge
 * only ever resizes and converts: the Images binding can do nothing else locally. Every logo
 * leaves here as a PNG master (vector sources rasterised MASTER_MIN_WIDTH wide, or
 * MASTER_MAX_SIDE tall if that is narrower), the renditions src/images/renditions.ts decides
 * from its pixels (greyscale, and for light and dark pages where some ink would vanish there),
 * and, for SVG sources, a sanitised copy of the vector.
 */
export const MASTER_MIN_WIDTH = 1200;
/**
 * Raster sources are kept at their own size up to this width and this height, the largest any
 * route serves; vector masters are no taller either. Bounding the height too keeps a sliver
 * such as 3,200×20,000 from becoming a 64-megapixel master whose renditions take a minute and
 * a gigabyte; it refuses nothing, since a tall stacked wordmark (rarely beyond 1:8) is still
 * 400 px wide at 3,200 tall.
 */
export const MASTER_MAX_SIDE = 3200;
const MAX_INPUT_PIXELS = 8000 * 8000;

export const inputFormats = ["svg", "png", "jpeg", "webp", "gif"] as const;
export type InputFormat = (typeof inputFormats)[number];

export type PreparedLogo = PreparedImage & { format: InputFormat };

export type PrepareResult = { ok: true; logo: PreparedLogo } | { ok: false; error: string };

export async function prepareLogo(input: Uint8Array, options: PrepareOptions = {}): Promise<PrepareResult> {
  // A raster that says what it is in its first bytes is decoded straight away: reading its
  // header first is a pipeline of its own, about a tenth of a small logo's conversion. One that
  // fails to decode so is read again the careful way below, for the exact reason.
  const sniffed = sniffFormat(input);
  if (sniffed === "png" || sniffed === "jpeg" || sniffed === "webp" || sniffed === "gif") {
    const logo = await preparedFrom(rasterImage(input), sniffed, input, options).catch(() => null);
    if (logo) return { ok: true, logo };
  }
  let metadata: Metadata;
  try {
    // The header only: the pixel limit applies to decoding, and its error would read as "unreadable".
    metadata = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    return { ok: false, error: "unreadable image (expected SVG, PNG, JPEG, WebP or GIF)" };
  }
  const format: string = metadata.format;
  if (!isInputFormat(format)) return { ok: false, error: `unsupported image format ${format ?? "unknown"}` };
  const { width, height } = metadata;
  if (!width || !height) return { ok: false, error: "image has no dimensions" };
  // A vector's nominal size says nothing of the work: it is rendered at the master's size. The
  // rasters it embeds are decoded whole, and held to the same limit below, with its drawing.
  if (format !== "svg" && width * height > MAX_INPUT_PIXELS) {
    return { ok: false, error: `image too large: ${width}×${height} (at most ${MAX_INPUT_PIXELS / 1_000_000} megapixels)` };
  }

  if (format === "svg") {
    const tooCostly = await svgTooCostly(Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString("utf8"), MAX_INPUT_PIXELS);
    if (tooCostly) return { ok: false, error: `SVG too costly to draw: ${tooCostly}` };
  }

  try {
    const image = format === "svg" ? await rasteriseSvg(input, { width, height }) : rasterImage(input);
    return { ok: true, logo: await preparedFrom(image, format, input, options) };
  } catch (error) {
    return { ok: false, error: `image could not be converted: ${(error as Error).message}` };
  }
}

/**
 * A stored original prepared again (npm run rerender), under the format its row names. Discovery
 * keeps two formats the importer does not take (src/discovery/sniff.ts): ICO, which sharp cannot
 * read, is read as discovery reads it (src/discovery/ico.ts: best entry first, the next when one
 * does not prepare), and AVIF, which sharp reads as HEIF. Each goes through the importer's path
 * as a PNG of the same pixels; the original stays the file as it came, its row and key keeping
 * its format.
 */
export async function prepareOriginal(
  format: string,
  original: Uint8Array,
): Promise<{ ok: true; logo: PreparedImage } | { ok: false; error: string }> {
  if (format !== "ico" && format !== "avif") return prepareLogo(original);
  const asOriginal = (prepared: PrepareResult) =>
    prepared.ok ? { ok: true as const, logo: { ...prepared.logo, format, original } } : prepared;
  if (format === "avif") {
    try {
      return asOriginal(await prepareLogo(await sharp(original, { limitInputPixels: MAX_INPUT_PIXELS }).rotate().png().toBuffer()));
    } catch (error) {
      return { ok: false, error: `unreadable AVIF: ${(error as Error).message}` };
    }
  }
  const prepared = await firstWorkingEntry(
    icoEntries(original),
    async (entry): Promise<PrepareResult> => {
      const pixels = entry.kind === "bmp" ? decodeBmpEntry(entry) : null;
      const png = entry.kind === "png" ? entry.data : pixels ? encodePng(pixels) : null;
      return png ? prepareLogo(png) : { ok: false, error: "ICO entry of an unsupported kind" };
    },
    { ok: false, error: "ICO without a readable image" },
  );
  return asOriginal(prepared);
}

/** Decoded once to raw RGBA, from which the renditions are decided (src/images/renditions.ts). */
async function preparedFrom(image: Sharp, format: InputFormat, input: Uint8Array, options: PrepareOptions): Promise<PreparedLogo> {
  const { data, info } = await image.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgba = {
    width: info.width,
    height: info.height,
    channels: 4 as const,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
  return { ...(await preparedFromPixels(format, input, rgba, encodePng, options)), format };
}

function isInputFormat(format: string | undefined): format is InputFormat {
  return (inputFormats as readonly string[]).includes(format ?? "");
}

/**
 * A vector rendered MASTER_MIN_WIDTH wide, or MASTER_MAX_SIDE tall when that is narrower, its
 * aspect kept. librsvg renders at `density` dpi against a 72 dpi intrinsic size.
 */
async function rasteriseSvg(input: Uint8Array, size: { width: number; height: number }): Promise<Sharp> {
  const svg = svgInPixels(input);
  // Measured again only when its size was rewritten; both are at 72 dpi, where the units agree.
  const { width = 0, height = 0 } = svg === input ? size : await sharp(svg, { limitInputPixels: false }).metadata();
  if (!width || !height) throw new Error("the SVG has no size");
  const scale = Math.min(MASTER_MIN_WIDTH / width, MASTER_MAX_SIDE / height);
  const density = Math.min(Math.max(72 * scale, 1), 100_000);
  return sharp(svg, { density, limitInputPixels: MAX_INPUT_PIXELS }).resize({
    width: MASTER_MIN_WIDTH,
    height: MASTER_MAX_SIDE,
    fit: "inside",
  });
}

function rasterImage(input: Uint8Array): Sharp {
  // First frame only for animated GIF/WebP; raster sources are never upscaled. The bounds apply
  // to the image as shown: after the EXIF rotation, which swaps the sides of a portrait photo.
  return sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, animated: false })
    .rotate()
    .resize({ width: MASTER_MAX_SIDE, height: MASTER_MAX_SIDE, fit: "inside", withoutEnlargement: true });
}

/** CSS px per physical unit (CSS Values 4 §6.2: 1in = 2.54cm = 25.4mm = 101.6Q = 72pt = 6pc = 96px). */
const PX_PER_UNIT: Record<string, number> = { in: 96, cm: 96 / 2.54, mm: 96 / 25.4, q: 96 / 101.6, pt: 96 / 72, pc: 96 / 6 };
/** The prolog (XML 1.0 §2.8: declaration, comments, processing instructions, document type) up to the root's name. */
const ROOT_START = /^(?:\xEF\xBB\xBF)?(?:\s|<\?[^]*?\?>|<!--[^]*?-->|<!DOCTYPE[^[>]*(?:\[[^]*?\]\s*)?>)*<(?:[\w.-]+:)?svg(?=[\s/>])/;
const ATTRIBUTE = /\s*([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
const PHYSICAL_LENGTH = /^\s*(\+?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(in|cm|mm|q|pt|pc)\s*$/i;

/**
 * The SVG with its root's width and height in px where they are in physical units, as a browser
 * reads them. libvips applies `density` to physical units twice (librsvg's dpi, then its own
 * scale), so a logo sized in pt or mm rendered at the density meant for 1,200 px came out about
 * 1,200²/width px wide; px and unitless sizes, em, % and a lone viewBox scale once. The bytes
 * are read as latin1, so everything else in the file is kept byte for byte, whatever its encoding.
 */
function svgInPixels(input: Uint8Array): Uint8Array {
  const source = Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString("latin1");
  const root = ROOT_START.exec(source);
  if (!root) return input;
  let rewritten = "";
  let copied = 0;
  ATTRIBUTE.lastIndex = root[0].length;
  for (let match = ATTRIBUTE.exec(source); match; match = ATTRIBUTE.exec(source)) {
    const [, name, doubleQuoted, singleQuoted] = match;
    const value = doubleQuoted ?? singleQuoted ?? "";
    const [, number = "", unit = ""] = (name === "width" || name === "height" ? PHYSICAL_LENGTH.exec(value) : null) ?? [];
    const pxPerUnit = PX_PER_UNIT[unit.toLowerCase()];
    if (!pxPerUnit) continue;
    const valueStart = ATTRIBUTE.lastIndex - 1 - value.length;
    rewritten += source.slice(copied, valueStart) + String(Number(number) * pxPerUnit);
    copied = valueStart + value.length;
  }
  return copied === 0 ? input : Buffer.from(rewritten + source.slice(copied), "latin1");
}
