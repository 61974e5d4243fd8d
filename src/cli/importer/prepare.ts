import sharp, { type Metadata, type Sharp } from "sharp";
import type { LogoTone } from "../../../schema";
import type { PreparedImage } from "../../catalogue/importLogo";
import { sha256Hex } from "../../lib/encoding";

/**
 * Image work at import time (sharp, Node side), so that the edge only ever resizes: the
 * Images binding can do nothing else locally. Every logo leaves here as a PNG master (vector
 * sources rasterised at least MASTER_MIN_WIDTH wide), its greyscale rendition and, for logos
 * that would vanish on a background of their own tone, inverted renditions.
 */
export const MASTER_MIN_WIDTH = 1200;
/** Raster sources are kept at their own size up to this width, the largest any route serves. */
export const MASTER_MAX_WIDTH = 3200;
const MAX_INPUT_PIXELS = 8000 * 8000;

export const inputFormats = ["svg", "png", "jpeg", "webp", "gif"] as const;
export type InputFormat = (typeof inputFormats)[number];

export type PreparedLogo = PreparedImage & { format: InputFormat };

export type PrepareResult = { ok: true; logo: PreparedLogo } | { ok: false; error: string };

// zlib level 3 without adaptive filtering: renditions 11 % larger than at level 6 for a quarter
// less conversion time (seed logos: 35 instead of 47 ms of CPU each), and conversion is most of
// what a bulk import or the first start spends.
const png = { compressionLevel: 3, adaptiveFiltering: false } as const;

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
    // Decode once to raw RGBA; every rendition and the tone measure start from these pixels.
    const { data: pixels, info } = await rasterise(input, format, metadata.width, metadata.height)
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const rgba = { raw: { width: info.width, height: info.height, channels: 4 as const } };
    const greyAlpha = { raw: { width: info.width, height: info.height, channels: 2 as const } };
    const tone = measureTone(pixels);
    const invertible = tone === "dark" || tone === "light";
    // Greyscale is computed here rather than by libvips, whose colourspace round trip costs
    // four times as much; the grey renditions are stored as grey + alpha PNGs.
    const grey = toGreyAlpha(pixels);
    const [master, greyPng, inverted, invertedGrey] = await Promise.all([
      sharp(pixels, rgba).png(png).toBuffer(),
      sharp(grey, greyAlpha).toColourspace("b-w").png(png).toBuffer(),
      invertible ? sharp(pixels, rgba).negate({ alpha: false }).png(png).toBuffer() : null,
      invertible ? sharp(invertGreyAlpha(grey), greyAlpha).toColourspace("b-w").png(png).toBuffer() : null,
    ]);
    return {
      ok: true,
      logo: {
        format,
        original: input,
        master: new Uint8Array(master),
        grey: new Uint8Array(greyPng),
        inverted: inverted && new Uint8Array(inverted),
        invertedGrey: invertedGrey && new Uint8Array(invertedGrey),
        width: info.width,
        height: info.height,
        contentHash: await sha256Hex(master),
        tone,
      },
    };
  } catch (error) {
    return { ok: false, error: `image could not be converted: ${(error as Error).message}` };
  }
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

/** RGBA → grey + alpha, grey being Rec. 709 luma of the sRGB values (weights in 256ths). */
export function toGreyAlpha(rgba: Uint8Array): Uint8Array {
  const out = new Uint8Array(rgba.length / 2);
  for (let i = 0, o = 0; i < rgba.length; i += 4, o += 2) {
    out[o] = (54 * rgba[i]! + 183 * rgba[i + 1]! + 19 * rgba[i + 2]! + 128) >> 8;
    out[o + 1] = rgba[i + 3]!;
  }
  return out;
}

function invertGreyAlpha(greyAlpha: Uint8Array): Uint8Array {
  const out = new Uint8Array(greyAlpha);
  for (let i = 0; i < out.length; i += 2) out[i] = 255 - out[i]!;
  return out;
}

/**
 * Tone of the visible ink: the share of opaque pixels that are dark (luma < 0.3) or light
 * (luma > 0.8). 90 % either way makes the logo `dark` or `light`; an image with almost no
 * transparency brings its own background and is `opaque`. Every 7th pixel is enough to tell.
 */
export function measureTone(rgba: Uint8Array): LogoTone {
  let sampled = 0;
  let opaque = 0;
  let dark = 0;
  let light = 0;
  for (let i = 0; i < rgba.length; i += 4 * 7) {
    sampled++;
    if (rgba[i + 3]! < 128) continue;
    opaque++;
    const luma = (0.2126 * rgba[i]! + 0.7152 * rgba[i + 1]! + 0.0722 * rgba[i + 2]!) / 255;
    if (luma < 0.3) dark++;
    else if (luma > 0.8) light++;
  }
  if (opaque === 0) return "mixed";
  if (opaque / sampled > 0.98) return "opaque";
  if (dark / opaque >= 0.9) return "dark";
  if (light / opaque >= 0.9) return "light";
  return "mixed";
}
