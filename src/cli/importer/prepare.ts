import sharp, { type Metadata, type Sharp } from "sharp";
import type { PreparedImage } from "../../catalogue/importLogo";
import { preparedFromPixels } from "../../catalogue/preparedImage";
import { decodeBmpEntry, icoEntries, largestEntry } from "../../discovery/ico";
import { encodePng } from "./png";

/**
 * Image work at import time (Node side: sharp decodes, ./png.ts encodes), so that the edge
 * only ever resizes and converts: the Images binding can do nothing else locally. Every logo
 * leaves here as a PNG master (vector sources rasterised at least MASTER_MIN_WIDTH wide), the
 * renditions src/images/renditions.ts decides from its pixels (greyscale, and for light and
 * dark pages where some ink would vanish there), and, for SVG sources, a sanitised copy of the
 * vector.
 */
export const MASTER_MIN_WIDTH = 1200;
/** Raster sources are kept at their own size up to this width, the largest any route serves. */
export const MASTER_MAX_WIDTH = 3200;
const MAX_INPUT_PIXELS = 8000 * 8000;

export const inputFormats = ["svg", "png", "jpeg", "webp", "gif"] as const;
export type InputFormat = (typeof inputFormats)[number];

export type PreparedLogo = PreparedImage & { format: InputFormat };

export type PrepareResult = { ok: true; logo: PreparedLogo } | { ok: false; error: string };

export async function prepareLogo(input: Uint8Array): Promise<PrepareResult> {
  let metadata: Metadata;
  try {
    metadata = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch {
    return { ok: false, error: "unreadable image (expected SVG, PNG, JPEG, WebP or GIF)" };
  }
  const format: string = metadata.format;
  if (!isInputFormat(format)) return { ok: false, error: `unsupported image format ${format ?? "unknown"}` };
  if (!metadata.width || !metadata.height) return { ok: false, error: "image has no dimensions" };

  try {
    // Decode once to raw RGBA; the renditions are decided from these pixels (src/images/renditions.ts).
    const { data, info } = await rasterise(input, format, metadata.width, metadata.height)
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const rgba = { width: info.width, height: info.height, channels: 4 as const, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
    return { ok: true, logo: { ...(await preparedFromPixels(format, input, rgba, encodePng)), format } };
  } catch (error) {
    return { ok: false, error: `image could not be converted: ${(error as Error).message}` };
  }
}

/**
 * A stored original prepared again (npm run rerender), under the format its row names. Discovery
 * keeps two formats the importer does not take (src/discovery/sniff.ts): ICO, which sharp cannot
 * read, is read as discovery reads it (src/discovery/ico.ts, the largest entry), and AVIF, which
 * sharp reads as HEIF. Each goes through the importer's path as a PNG of the same pixels.
 */
export async function prepareOriginal(format: string, original: Uint8Array): Promise<{ ok: true; logo: PreparedImage } | { ok: false; error: string }> {
  if (format !== "ico" && format !== "avif") return prepareLogo(original);
  let png: Uint8Array;
  if (format === "ico") {
    const entry = largestEntry(icoEntries(original));
    const pixels = entry?.kind === "bmp" ? decodeBmpEntry(entry) : null;
    if (entry?.kind === "png") png = entry.data;
    else if (pixels) png = encodePng(pixels);
    else return { ok: false, error: entry ? "ICO entry of an unsupported kind" : "ICO without a readable image" };
  } else {
    try {
      png = await sharp(original, { limitInputPixels: MAX_INPUT_PIXELS }).rotate().png().toBuffer();
    } catch (error) {
      return { ok: false, error: `unreadable AVIF: ${(error as Error).message}` };
    }
  }
  const prepared = await prepareLogo(png);
  // The original is the file as it came, not its PNG: its row and key keep its format.
  return prepared.ok ? { ok: true, logo: { ...prepared.logo, format, original } } : prepared;
}

function isInputFormat(format: string | undefined): format is InputFormat {
  return (inputFormats as readonly string[]).includes(format ?? "");
}

function rasterise(input: Uint8Array, format: InputFormat, width: number, height: number): Sharp {
  if (format === "svg") {
    // librsvg renders at `density` dpi against a 72 dpi intrinsic size: scale so the master
    // comes out MASTER_MIN_WIDTH wide, keeping the aspect ratio.
    const density = Math.min(72 * (MASTER_MIN_WIDTH / width), 100_000);
    return sharp(input, { density, limitInputPixels: MAX_INPUT_PIXELS }).resize({ width: MASTER_MIN_WIDTH });
  }
  // First frame only for animated GIF/WebP; raster sources are never upscaled.
  const image = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, animated: false }).rotate();
  return width > MASTER_MAX_WIDTH ? image.resize({ width: MASTER_MAX_WIDTH }) : image;
}
