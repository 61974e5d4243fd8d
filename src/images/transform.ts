import { decode, encode } from "fast-png";
import { domainCacheTag } from "../lib/cacheTags";
import { cachedResponse, dependency, storeResponse } from "../lib/dependencies";
import { makeGrey } from "./greyOnDemand";
import { isolateByteCache } from "../lib/isolateCaches";
import type { Rgb } from "./colour";
import { PAGES } from "./renditions";

/**
 * Resizing and format conversion at the edge, through the Images binding: the only transforms
 * the lookup and asset routes need (greyscale and themed renditions are objects of their own), and
 * the only ones the local binding performs. JPEG has no transparency, so a JPEG is flattened
 * onto the page it is meant for first; that is done here on the decoded PNG (fast-png), because
 * the local binding ignores a background.
 */
export const outputFormats = ["png", "webp", "avif", "jpg"] as const;
export type OutputFormat = (typeof outputFormats)[number];
/** What a request may ask for: a raster format, or the vector original where there is one. */
export const requestFormats = [...outputFormats, "svg"] as const;
export type RequestFormat = (typeof requestFormats)[number];

export const MIME_TYPES: Record<RequestFormat, string> = {
  png: "image/png",
  webp: "image/webp",
  avif: "image/avif",
  jpg: "image/jpeg",
  svg: "image/svg+xml",
};

export type Resize =
  /** Exactly this width, aspect kept; small sources are enlarged. */
  | { width: number; enlarge: true }
  /** At most this width, aspect kept; never enlarged. */
  | { width: number; enlarge: false };

export interface Render {
  /** None: the stored size. */
  resize?: Resize | undefined;
  format: OutputFormat;
  /** The page a JPEG is flattened onto: `theme`'s background, white without one. */
  page: "light" | "dark";
}

export const DENSITIES = [1, 2, 3] as const;
export type Density = (typeof DENSITIES)[number];

/** The widest image the edge makes (the asset route's limit, and the spec's maxWidth's). */
export const MAX_OUTPUT_WIDTH = 3200;

/**
 * The pixel width for `size` CSS pixels at a density: `size × dpr`, but the density never
 * enlarges past the master (a retina request gets the sharpest there is, not an upscale) nor
 * past MAX_OUTPUT_WIDTH; `size` itself keeps its meaning.
 */
export function densityWidth(size: number, dpr: Density, masterWidth: number): number {
  return dpr === 1 ? size : Math.max(size, Math.min(size * dpr, masterWidth, MAX_OUTPUT_WIDTH));
}

/** The tallest image the edge makes: a width is asked, and a very tall logo would otherwise grow without bound. */
export const MAX_OUTPUT_HEIGHT = 3200;

/**
 * `width`, narrowed so that the image is at most MAX_OUTPUT_HEIGHT tall: a 2×400 logo asked at
 * 3,200 wide would be 640,000 px tall, and anyone may ask the public asset route for it.
 */
export function withinHeight(width: number, sourceWidth: number, sourceHeight: number): number {
  if (sourceWidth <= 0 || sourceHeight <= 0) return width;
  return Math.max(1, Math.min(width, Math.floor((MAX_OUTPUT_HEIGHT * sourceWidth) / sourceHeight)));
}

/**
 * An image made, and its type as made: asked for AVIF, Cloudflare's binding may make WebP or
 * JPEG instead (past its AVIF size limit, or under load), and the answer must say so.
 */
export interface Transformed {
  bytes: ArrayBuffer;
  contentType: string;
}

/** The Images binding's work, failing as `Unavailable` when the binding does (src/lib/dependencies.ts). */
export function transformImage(images: ImagesBinding, source: ReadableStream<Uint8Array>, render: Render): Promise<Transformed> {
  return dependency("image transformation", () => transformWith(images, source, render));
}

async function transformWith(images: ImagesBinding, source: ReadableStream<Uint8Array>, render: Render): Promise<Transformed> {
  const resized = (input: ReadableStream<Uint8Array>) => {
    const image = images.input(input);
    return render.resize ? image.transform({ width: render.resize.width, fit: render.resize.enlarge ? "contain" : "scale-down" }) : image;
  };
  if (render.format === "jpg") {
    const png = new Uint8Array(
      render.resize
        ? await bytesOf((await resized(source).output({ format: "image/png" })).image())
        : await new Response(source).arrayBuffer(),
    );
    const { width, height } = pngSize(png);
    const jpeg = async (flat: Uint8Array, size?: { width: number; height: number }) => {
      const input = images.input(streamOf(flat));
      return made(await (size ? input.transform({ ...size, fit: "squeeze" }) : input).output({ format: "image/jpeg", quality: 90 }));
    };
    if (width * height <= MAX_FLATTENED_PIXELS) return jpeg(flattenPng(png, PAGES[render.page]));
    // Flattened in JavaScript, a large image would cost the isolate seconds and 100 MB (anyone
    // may ask /assets for a 3,200 px JPEG): it is flattened at most MAX_FLATTENED_PIXELS large,
    // and the binding brings it back to the very size it had (both sides: scaled by its width
    // alone, its height could come back a pixel off what the headers say).
    const smaller = Math.max(1, Math.floor(width * Math.sqrt(MAX_FLATTENED_PIXELS / (width * height))));
    const small = await bytesOf(
      (await images.input(streamOf(png)).transform({ width: smaller, fit: "scale-down" }).output({ format: "image/png" })).image(),
    );
    return jpeg(flattenPng(new Uint8Array(small), PAGES[render.page]), { width, height });
  }
  if (!render.resize && render.format === "png") return { bytes: await new Response(source).arrayBuffer(), contentType: MIME_TYPES.png };
  return made(await resized(source).output({ format: MIME_TYPES[render.format] as "image/png" }));
}

const made = async (result: ImageTransformationResult): Promise<Transformed> => ({
  bytes: await bytesOf(result.image()),
  contentType: result.contentType(),
});

/** The most pixels a JPEG is flattened at in the isolate: about 8 MB of decoded image. */
export const MAX_FLATTENED_PIXELS = 2_000_000;

/** A PNG's size from its header (IHDR, the first chunk), without decoding it. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return png.byteLength >= 24 ? { width: view.getUint32(16), height: view.getUint32(20) } : { width: 0, height: 0 };
}

/**
 * A PNG composited over an opaque background: RGB without alpha, as JPEG wants it; one plain
 * loop, so that it costs little beside the decoding.
 */
export function flattenPng(png: Uint8Array, background: Rgb): Uint8Array {
  const image = decode(png);
  const { width, height, channels, palette } = image;
  const pixels = width * height;
  const [backR, backG, backB] = background;
  // c over the background at alpha a, rounded as Math.round((c·a + back·(255 − a)) / 255).
  const over = (c: number, a: number, back: number) => ((c * a + back * (255 - a) + 127) / 255) | 0;
  let out: Uint8Array;
  if (palette) {
    const flat = palette.map((entry) => {
      const a = entry[3] ?? 255;
      return [over(entry[0]!, a, backR), over(entry[1]!, a, backG), over(entry[2]!, a, backB)] as const;
    });
    const data = image.data;
    out = new Uint8Array(pixels * 3);
    for (let p = 0; p < pixels; p++) {
      const rgb = flat[data[p]!]!;
      out[p * 3] = rgb[0];
      out[p * 3 + 1] = rgb[1];
      out[p * 3 + 2] = rgb[2];
    }
  } else {
    // 16-bit samples are brought to 8 bits first, rounded as the 8-bit ones are kept.
    const data = image.depth === 16 ? Uint8Array.from(image.data, (v) => ((v * 255 + 32767) / 65535) | 0) : (image.data as Uint8Array);
    const grey = channels <= 2;
    const alpha = channels === 2 || channels === 4;
    // In place where a pixel is at least three bytes: written behind what is still to be read.
    out = channels >= 3 ? data.subarray(0, pixels * 3) : new Uint8Array(pixels * 3);
    for (let p = 0, i = 0; p < pixels; p++, i += channels) {
      const r = data[i]!;
      const g = grey ? r : data[i + 1]!;
      const b = grey ? r : data[i + 2]!;
      const a = alpha ? data[i + channels - 1]! : 255;
      out[p * 3] = over(r, a, backR);
      out[p * 3 + 1] = over(g, a, backG);
      out[p * 3 + 2] = over(b, a, backB);
    }
  }
  return encode({ width, height, data: out, channels: 3, depth: 8 });
}

const bytesOf = (stream: ReadableStream<Uint8Array>) => new Response(stream).arrayBuffer();
const streamOf = (bytes: Uint8Array) => new Response(bytes).body!;

/** Output height for a width, keeping the aspect ratio as the resize does. */
export function scaledHeight(sourceWidth: number, sourceHeight: number, width: number): number {
  return Math.max(1, Math.round((sourceHeight * width) / sourceWidth));
}

// v3: entries carry the type made (v2's said nothing, and an AVIF made as WebP was served as AVIF).
const RENDER_CACHE = "https://render.logo-lookup.internal/v3";

/** Recently rendered images, kept in the isolate before the Cache API. */
const recent = isolateByteCache<Transformed>({
  name: "images.rendered",
  holds: "a rendered image's bytes and type, by what it is (key, width, format, page)",
  capacity: 4 * 1024 * 1024,
  ofDomain: (id, domain) => id.startsWith(`${RENDER_CACHE}/${encodeURIComponent(`logos/${domain}/`)}`),
});

/**
 * A stored rendition rendered at `width` in `format`, kept in the data centre's cache:
 * renditions are immutable under their keys, so each (key, width, format, page) is rendered
 * once. The page only matters to JPEG, and is left out of the others' cache key. Null when the
 * object is missing (and, with `named`, could not be made).
 */
export async function renderImage(
  env: Pick<Env, "LOGOS" | "IMAGES">,
  key: string,
  render: { width: number; format: OutputFormat; page: "light" | "dark" },
  defer: (work: Promise<unknown>) => void,
  /** Given, a greyscale rendition that the catalogue names and the bucket lacks is made (./greyOnDemand.ts). */
  named?: (key: string) => Promise<boolean>,
): Promise<Transformed | null> {
  const page = render.format === "jpg" ? `&page=${render.page}` : "";
  const id = `${RENDER_CACHE}/${encodeURIComponent(key)}?width=${render.width}&format=${render.format}${page}`;
  const remembered = recent.get(id);
  if (remembered) return remembered;
  const hit = await cachedResponse("render", id);
  if (hit) {
    const rendered = { bytes: await hit.arrayBuffer(), contentType: hit.headers.get("content-type") ?? MIME_TYPES[render.format] };
    recent.set(id, rendered, rendered.bytes.byteLength);
    return rendered;
  }
  // A greyscale rendition not asked for before is made now (./greyOnDemand.ts).
  const object = await dependency("object storage", env.LOGOS.get(key));
  const source = object?.body ?? (named && (await makeGrey(env.LOGOS, key, named))?.bytes);
  if (!source) return null;
  const input = source instanceof Uint8Array ? streamOf(source) : source;
  const rendered = await transformImage(env.IMAGES, input, {
    resize: { width: render.width, enlarge: true },
    format: render.format,
    page: render.page,
  });
  // Another format than asked (an AVIF Cloudflare could not make just now) is not kept: the
  // next request asks again.
  if (rendered.contentType !== MIME_TYPES[render.format]) return rendered;
  recent.set(id, rendered, rendered.bytes.byteLength);
  defer(
    storeResponse(
      "render",
      id,
      new Response(rendered.bytes, {
        headers: {
          "Content-Type": rendered.contentType,
          "Cache-Control": "public, max-age=31536000, immutable",
          // What a zone's purge of the domain drops (src/purge/cdn.ts): the object's key names its company's domain.
          "Cache-Tag": domainCacheTag(key.split("/")[1] ?? ""),
        },
      }),
    ),
  );
  return rendered;
}
