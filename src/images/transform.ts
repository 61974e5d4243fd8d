import { decode, encode } from "fast-png";
import { cachedResponse, dependency, storeResponse } from "../lib/dependencies";
import { RecentBytes } from "../lib/recent";
import type { Rgb } from "./colour";
import { PAGES } from "./renditions";

/**
 * Resizing and format conversion at the edge, through the Images binding: the only transforms
 * the lookup and asset routes need (greyscale and themed renditions are prepared at import), and
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

/**
 * The pixel width for `size` CSS pixels at a density: `size × dpr`, but the density never
 * enlarges past the master (a retina request gets the sharpest there is, not an upscale);
 * `size` itself keeps its meaning.
 */
export function densityWidth(size: number, dpr: Density, masterWidth: number): number {
  return dpr === 1 ? size : Math.max(size, Math.min(size * dpr, masterWidth));
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

/** The Images binding's work, failing as `Unavailable` when the binding does (src/lib/dependencies.ts). */
export function transformImage(images: ImagesBinding, source: ReadableStream<Uint8Array>, render: Render): Promise<ArrayBuffer> {
  return dependency("image transformation", () => transformWith(images, source, render));
}

async function transformWith(images: ImagesBinding, source: ReadableStream<Uint8Array>, render: Render): Promise<ArrayBuffer> {
  const resized = (input: ReadableStream<Uint8Array>) => {
    const image = images.input(input);
    return render.resize ? image.transform({ width: render.resize.width, fit: render.resize.enlarge ? "contain" : "scale-down" }) : image;
  };
  if (render.format === "jpg") {
    const png = render.resize ? await bytesOf((await resized(source).output({ format: "image/png" })).image()) : await new Response(source).arrayBuffer();
    const flat = flattenPng(new Uint8Array(png), PAGES[render.page]);
    return bytesOf((await images.input(streamOf(flat)).output({ format: "image/jpeg", quality: 90 })).image());
  }
  if (!render.resize && render.format === "png") return new Response(source).arrayBuffer();
  return bytesOf((await resized(source).output({ format: MIME_TYPES[render.format] as "image/png" })).image());
}

/** A PNG composited over an opaque background: RGB without alpha, as JPEG wants it. */
export function flattenPng(png: Uint8Array, background: Rgb): Uint8Array {
  const image = decode(png);
  const { width, height, channels, palette } = image;
  const max = image.depth === 16 ? 65535 : 255;
  const data = image.data;
  const out = new Uint8Array(width * height * 3);
  for (let p = 0; p < width * height; p++) {
    let r: number;
    let g: number;
    let b: number;
    let a = 255;
    if (palette) {
      const entry = palette[data[p]!]!;
      [r, g, b] = [entry[0]!, entry[1]!, entry[2]!];
      a = entry[3] ?? 255;
    } else {
      const at = (c: number) => Math.round((data[p * channels + c]! * 255) / max);
      const grey = channels <= 2;
      r = at(0);
      g = grey ? r : at(1);
      b = grey ? r : at(2);
      if (channels === 2 || channels === 4) a = at(channels - 1);
    }
    out[p * 3] = Math.round((r * a + background[0] * (255 - a)) / 255);
    out[p * 3 + 1] = Math.round((g * a + background[1] * (255 - a)) / 255);
    out[p * 3 + 2] = Math.round((b * a + background[2] * (255 - a)) / 255);
  }
  return encode({ width, height, data: out, channels: 3, depth: 8 });
}

const bytesOf = (stream: ReadableStream<Uint8Array>) => new Response(stream).arrayBuffer();
const streamOf = (bytes: Uint8Array) => new Response(bytes).body!;

/** Output height for a width, keeping the aspect ratio as the resize does. */
export function scaledHeight(sourceWidth: number, sourceHeight: number, width: number): number {
  return Math.max(1, Math.round((sourceHeight * width) / sourceWidth));
}

const RENDER_CACHE = "https://render.logo-lookup.internal/v2";

/** Recently rendered images, kept in the isolate before the Cache API. */
const recent = new RecentBytes<ArrayBuffer>(16 * 1024 * 1024);

/**
 * A stored rendition rendered at `width` in `format`, kept in the data centre's cache:
 * renditions are immutable under their keys, so each (key, width, format, page) is rendered
 * once. The page only matters to JPEG, and is left out of the others' cache key. Null when the
 * object is missing.
 */
export async function renderImage(
  env: Pick<Env, "LOGOS" | "IMAGES">,
  key: string,
  render: { width: number; format: OutputFormat; page: "light" | "dark" },
  defer: (work: Promise<unknown>) => void,
): Promise<ArrayBuffer | null> {
  const page = render.format === "jpg" ? `&page=${render.page}` : "";
  const id = `${RENDER_CACHE}/${encodeURIComponent(key)}?width=${render.width}&format=${render.format}${page}`;
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
  const bytes = await transformImage(env.IMAGES, object.body, { resize: { width: render.width, enlarge: true }, format: render.format, page: render.page });
  recent.set(id, bytes, bytes.byteLength);
  defer(storeResponse("render", id, new Response(bytes, { headers: { "Cache-Control": "public, max-age=31536000, immutable" } })));
  return bytes;
}
