import { encodeRenditions } from "../images/renditionFiles";
import { type Pixels, renditionPixels, undecidedPixels } from "../images/renditions";
import { THEMES_ON_DEMAND_MAX_PIXELS } from "./themesOnDemand";
import { sanitiseSvg } from "../images/svg";
import { sha256Hex } from "../lib/encoding";
import type { PreparedImage } from "./importLogo";

export interface PrepareOptions {
  /**
   * When the light and dark renditions are decided: now (every import but one), or on the first
   * lookup of the logo (the first start's seeding: src/catalogue/themesOnDemand.ts), which stores
   * the master alone. A master over THEMES_ON_DEMAND_MAX_PIXELS has them decided now either way.
   */
  themes?: "now" | "on first lookup";
}

/**
 * A logo's stored files from its decoded pixels, whichever way it entered the catalogue (the
 * Node importer with sharp, the Worker's discovery with a pure-JS encoder): the renditions
 * decided by src/images/renditions.ts, each encoded by the caller's PNG encoder, the
 * sanitised vector for an SVG original, and the master's hash that names them all.
 */
export async function preparedFromPixels(
  format: string,
  original: Uint8Array,
  rgba: Pixels,
  encodePng: (pixels: Pixels) => Uint8Array | Promise<Uint8Array>,
  { themes = "now" }: PrepareOptions = {},
): Promise<PreparedImage> {
  const later = themes === "on first lookup" && rgba.width * rgba.height <= THEMES_ON_DEMAND_MAX_PIXELS;
  const pixels = later ? undecidedPixels(rgba) : renditionPixels(rgba);
  const vector = format === "svg" ? sanitiseSvg(new TextDecoder().decode(original)) : null;
  const { files, renditions } = await encodeRenditions(pixels, async (p) => encodePng(p), { vector: vector?.ok === true });
  return {
    format,
    original,
    files,
    vector: vector?.ok ? new TextEncoder().encode(vector.svg) : null,
    renditions: later ? { ...renditions, pending: true } : renditions,
    width: rgba.width,
    height: rgba.height,
    contentHash: await sha256Hex(files.master),
    tone: pixels.tone,
  };
}

/**
 * The image without its vector: what is stored of an SVG whose markup is not ours to serve (a
 * stranger's site's icon, found by discovery). Only the PNGs made from it are public; a lookup
 * asking for `format=svg` gets the PNG, as for any logo without a vector.
 */
export function withoutVector(image: PreparedImage): PreparedImage {
  return { ...image, vector: null, renditions: { ...image.renditions, vector: false } };
}
