import { encodeRenditions } from "../images/prepared";
import { type Pixels, renditionPixels } from "../images/renditions";
import { sanitiseSvg } from "../images/svg";
import { sha256Hex } from "../lib/encoding";
import type { PreparedImage } from "./importLogo";

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
): Promise<PreparedImage> {
  const pixels = renditionPixels(rgba);
  const vector = format === "svg" ? sanitiseSvg(new TextDecoder().decode(original)) : null;
  const { files, renditions } = await encodeRenditions(pixels, async (p) => encodePng(p), { vector: vector?.ok === true });
  return {
    format,
    original,
    files,
    vector: vector?.ok ? new TextEncoder().encode(vector.svg) : null,
    renditions,
    width: rgba.width,
    height: rgba.height,
    contentHash: await sha256Hex(files.master),
    tone: pixels.tone,
  };
}
