import { type Pixels, renditionPixels } from "../images/renditions";
import { sha256Hex } from "../lib/encoding";
import type { PreparedImage } from "./importLogo";

/**
 * A logo's stored files from its decoded pixels: the renditions decided by
 * src/images/renditions.ts, each encoded as PNG by the caller's encoder (sharp in the Node
 * importer, a pure-JS encoder in the Worker), and the master's hash that names them.
 */
export async function preparedFromPixels(
  format: string,
  original: Uint8Array,
  rgba: Pixels,
  encodePng: (pixels: Pixels) => Uint8Array | Promise<Uint8Array>,
): Promise<PreparedImage> {
  const renditions = renditionPixels(rgba);
  const [master, grey, inverted, invertedGrey] = await Promise.all([
    encodePng(renditions.master),
    encodePng(renditions.grey),
    renditions.inverted && encodePng(renditions.inverted),
    renditions.invertedGrey && encodePng(renditions.invertedGrey),
  ]);
  return {
    format,
    original,
    master,
    grey,
    inverted,
    invertedGrey,
    width: rgba.width,
    height: rgba.height,
    contentHash: await sha256Hex(master),
    tone: renditions.tone,
  };
}
