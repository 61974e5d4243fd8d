import { GREY_ON_DEMAND_MAX_PIXELS } from "./greyOnDemand";
import type { Rendition, RenditionSet } from "./objectKeys";
import { greyOf, type Pixels, type RenditionPixels, RENDITIONS_VERSION } from "./renditions";

/**
 * From decided pixels to the files a logo is stored as, whatever encodes the PNGs: sharp in the
 * Node importer, whatever the Worker uses when it writes logos itself. The rendition set says
 * which of them exist (src/images/objectKeys.ts derives their keys from it). Greyscale renditions are
 * among the files only for a master over GREY_ON_DEMAND_MAX_PIXELS; a smaller one's are made on
 * first request (./greyOnDemand.ts), which spares most logos half their objects and encodings.
 */
export type RenditionFiles = { master: Uint8Array } & Partial<Record<Rendition, Uint8Array>>;

export async function encodeRenditions(
  pixels: RenditionPixels,
  encodePng: (pixels: Pixels) => Promise<Uint8Array>,
  options: { vector: boolean },
): Promise<{ files: RenditionFiles; renditions: RenditionSet }> {
  const greyStored = pixels.master.width * pixels.master.height > GREY_ON_DEMAND_MAX_PIXELS;
  const optional = (p: Pixels | null) => (p ? encodePng(p) : Promise.resolve(undefined));
  const grey = (p: Pixels | null) => (p && greyStored ? encodePng(greyOf(p)) : Promise.resolve(undefined));
  const [master, light, dark, masterGrey, lightGrey, darkGrey] = await Promise.all([
    encodePng(pixels.master),
    optional(pixels.light),
    optional(pixels.dark),
    grey(pixels.master),
    grey(pixels.light),
    grey(pixels.dark),
  ]);
  const files: RenditionFiles = { master };
  for (const [rendition, bytes] of Object.entries({ light, dark, grey: masterGrey, lightGrey, darkGrey }))
    if (bytes) files[rendition as Rendition] = bytes;
  return { files, renditions: renditionSetOf(pixels, options) };
}

/** The rendition set of decided pixels: the light and dark renditions they have, and what a lookup without a theme serves. */
export function renditionSetOf(pixels: RenditionPixels, { vector }: { vector: boolean }): RenditionSet {
  return {
    version: RENDITIONS_VERSION,
    light: pixels.light !== null,
    dark: pixels.dark !== null,
    plain: pixels.plain === "light" && pixels.light !== null ? "light" : "master",
    vector,
  };
}
