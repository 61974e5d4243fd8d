import { cachedResponse, dependency, storeResponse } from "../lib/dependencies";
import { RecentBytes } from "../lib/recent";

/**
 * Resizing at the edge, through the Images binding: the only transform the lookup and asset
 * routes need (greyscale and inverted renditions are prepared at import), and the only one
 * the local binding performs.
 */
export type Resize =
  /** Exactly this width, aspect kept; small sources are enlarged. */
  | { width: number; enlarge: true }
  /** At most this width, aspect kept; never enlarged. */
  | { width: number; enlarge: false };

export async function resizePng(images: ImagesBinding, source: ReadableStream<Uint8Array>, resize: Resize): Promise<ReadableStream<Uint8Array>> {
  return dependency("image transformation", async () => {
    const result = await images
      .input(source)
      .transform({ width: resize.width, fit: resize.enlarge ? "contain" : "scale-down" })
      .output({ format: "image/png" });
    return result.image();
  });
}

/** Output height for a width, keeping the aspect ratio as the resize does. */
export function scaledHeight(sourceWidth: number, sourceHeight: number, width: number): number {
  return Math.max(1, Math.round((sourceHeight * width) / sourceWidth));
}

const RENDER_CACHE = "https://render.logo-lookup.internal/v1";

/** Recently rendered PNGs, kept in the isolate before the Cache API. */
const recent = new RecentBytes<ArrayBuffer>(16 * 1024 * 1024);

/**
 * A stored PNG rendition resized to `width`, kept in the data centre's cache: renditions are
 * immutable under their keys, so a resize is done once per key and width. Null when the
 * object is missing.
 */
export async function renderPng(
  env: Pick<Env, "LOGOS" | "IMAGES">,
  key: string,
  width: number,
  defer: (work: Promise<unknown>) => void,
): Promise<ArrayBuffer | null> {
  const id = `${RENDER_CACHE}/${encodeURIComponent(key)}?width=${width}`;
  const remembered = recent.get(id);
  if (remembered) return remembered;
  const hit = await cachedResponse("render", id);
  if (hit) {
    const bytes = await hit.arrayBuffer();
    recent.set(id, bytes, bytes.byteLength);
    return bytes;
  }
  const object = await dependency("object storage", env.LOGOS.get(key));
  if (!object) return null;
  const bytes = await dependency("image transformation", async () => new Response(await resizePng(env.IMAGES, object.body, { width, enlarge: true })).arrayBuffer());
  recent.set(id, bytes, bytes.byteLength);
  defer(storeResponse("render", id, new Response(bytes, { headers: { "Cache-Control": "public, max-age=31536000, immutable" } })));
  return bytes;
}
