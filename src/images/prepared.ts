import type { Rendition, RenditionSet } from "./keys";
import { type Pixels, type RenditionPixels, RENDITIONS_VERSION } from "./renditions";

/**
 * From decided pixels to the files a logo is stored as, whatever encodes the PNGs: sharp in the
 * Node importer, whatever the Worker uses when it writes logos itself. The rendition set says
 * which of them exist (src/images/keys.ts derives their keys from it).
 */
export type RenditionFiles = { master: Uint8Array; grey: Uint8Array } & Partial<Record<Rendition, Uint8Array>>;

export async function encodeRenditions(
  pixels: RenditionPixels,
  encodePng: (pixels: Pixels) => Promise<Uint8Array>,
  options: { vector: boolean },
): Promise<{ files: RenditionFiles; renditions: RenditionSet }> {
  const optional = (p: Pixels | null) => (p ? encodePng(p) : Promise.resolve(undefined));
  const [master, grey, light, lightGrey, dark, darkGrey] = await Promise.all([
    encodePng(pixels.master),
    encodePng(pixels.grey),
    optional(pixels.light),
    optional(pixels.lightGrey),
    optional(pixels.dark),
    optional(pixels.darkGrey),
  ]);
  const files: RenditionFiles = { master, grey };
  if (light && lightGrey) Object.assign(files, { light, lightGrey });
  if (dark && darkGrey) Object.assign(files, { dark, darkGrey });
  return {
    files,
    renditions: {
      version: RENDITIONS_VERSION,
      light: files.light !== undefined,
      dark: files.dark !== undefined,
      plain: pixels.plain === "light" && files.light ? "light" : "master",
      vector: options.vector,
    },
  };
}
