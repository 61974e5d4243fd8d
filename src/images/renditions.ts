import type { LogoTone } from "../../schema";

/**
 * What a logo's stored renditions look like, decided from its pixels. Pure and
 * runtime-agnostic: the Node importer (sharp) and the Worker decode and encode PNGs their own
 * way, and both hand the decoded RGBA here, so every logo gets the same renditions whichever
 * way it entered the catalogue. The edge then only resizes (the Images binding can do nothing
 * else locally).
 *
 *   master         the logo as it is
 *   grey           greyscale (grey + alpha)
 *   inverted       colours inverted, for `dark` and `light` logos only (they vanish on a
 *                  background of their own tone)
 *   invertedGrey   inverted greyscale, likewise
 */
export interface Pixels {
  width: number;
  height: number;
  /** 4: RGBA; 2: grey + alpha. */
  channels: 2 | 4;
  data: Uint8Array;
}

export interface RenditionPixels {
  tone: LogoTone;
  master: Pixels;
  grey: Pixels;
  inverted: Pixels | null;
  invertedGrey: Pixels | null;
}

export function renditionPixels(rgba: Pixels): RenditionPixels {
  if (rgba.channels !== 4) throw new Error("renditions start from RGBA pixels");
  const tone = measureTone(rgba.data);
  const invertible = tone === "dark" || tone === "light";
  const grey: Pixels = { width: rgba.width, height: rgba.height, channels: 2, data: toGreyAlpha(rgba.data) };
  return {
    tone,
    master: rgba,
    grey,
    inverted: invertible ? { ...rgba, data: invertColour(rgba.data, 4) } : null,
    invertedGrey: invertible ? { ...grey, data: invertColour(grey.data, 2) } : null,
  };
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

/** Every colour channel inverted, alpha (the last channel of each pixel) kept. */
function invertColour(pixels: Uint8Array, channels: 2 | 4): Uint8Array {
  const out = new Uint8Array(pixels);
  for (let i = 0; i < out.length; i++) if (i % channels !== channels - 1) out[i] = 255 - out[i]!;
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
