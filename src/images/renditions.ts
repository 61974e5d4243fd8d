import type { LogoTone } from "../../schema";
import { BoundedCache } from "../lib/boundedCache";
import { isolateCache, MAP_ENTRY_BYTES } from "../lib/isolateCaches";
import { contrastRatio, fromLinear, luminance, type Rgb, toOklch, withContrast } from "./colour";

/**
 * What a logo's stored renditions look like, decided from its pixels. Pure and
 * runtime-agnostic: the Node importer (sharp) and the Worker decode and encode images their own
 * way, and both hand the decoded RGBA here, so every logo gets the same renditions whichever
 * way it entered the catalogue. The edge then only resizes and converts (the Images binding
 * can do nothing else locally).
 *
 *   master     the logo as it is
 *   light      for light pages (≈ white): the ink that vanishes there darkened, hue kept
 *   dark       for dark pages (≈ #121212): the ink that vanishes there lightened, hue kept
 *   grey, lightGrey, darkGrey   their greyscale (greyOf), which keeps each pixel's luminance,
 *              so a grey rendition has exactly the contrast of its colour rendition on any
 *              background. Most are made on first request, from the stored colour rendition
 *              (./greyOnDemand.ts); see ./prepared.ts.
 *
 * `light` and `dark` exist only when some ink needs changing; otherwise the master serves that
 * page unchanged. Bump RENDITIONS_VERSION whenever what this module produces changes: the
 * version is part of every derived rendition's key, so a changed rendition never reuses the key
 * (and the immutable caches) of the old one, and `npm run rerender` knows what is out of date.
 */
export const RENDITIONS_VERSION = 3;

/** WCAG 2.2's bar for graphical objects (SC 1.4.11, non-text contrast). */
export const MIN_CONTRAST = 3;

/** The backgrounds `theme` names: white, and the dark surface of Material's dark theme. */
export const PAGES = { light: [255, 255, 255], dark: [0x12, 0x12, 0x12] } as const satisfies Record<string, Rgb>;
export type Page = keyof typeof PAGES;

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
  light: Pixels | null;
  dark: Pixels | null;
  /**
   * What a lookup without a theme serves: the master, or `light` when white or near-white ink
   * would vanish on the most common page there is (legible on white by default).
   */
  plain: "master" | "light";
}

export function renditionPixels(rgba: Pixels): RenditionPixels {
  if (rgba.channels !== 4) throw new Error("renditions start from RGBA pixels");
  const tone = measureTone(rgba.data);
  // An image that brings its own background (a full tile) is treated alike, its edge being where
  // the page meets it; only by default is it left as it is, since it was made for its own page.
  const scratch = scratchFor(rgba, EXACT_COLOURS);
  if (!scratch) return fromReducedCopy(rgba, tone);
  analysisWork.pixelsAnalysed += rgba.width * rgba.height;
  const onLight = inkOnPage(rgba, "light", scratch);
  const onDark = inkOnPage(rgba, "dark", scratch);
  return {
    tone,
    master: rgba,
    light: onLight?.pixels ?? null,
    dark: onDark?.pixels ?? null,
    plain: tone !== "opaque" && onLight?.nearWhiteVanishes ? "light" : "master",
  };
}

/**
 * The logo with its themes left undecided (src/catalogue/themesOnDemand.ts): the master for every
 * page until a lookup decides them with renditionPixels, from the master's very pixels.
 */
export function undecidedPixels(rgba: Pixels): RenditionPixels {
  if (rgba.channels !== 4) throw new Error("renditions start from RGBA pixels");
  return { tone: measureTone(rgba.data), master: rgba, light: null, dark: null, plain: "master" };
}

/**
 * Distinct ink colours above which a rendition's colours are decided on a reduced copy. Logos
 * have a few hundred (their anti-aliased edges); a photograph, or a hostile file of random
 * pixels, has a million, and deciding each (withContrast, a search in OKLCH) cost seconds of
 * CPU for one stranger's icon. Every logo of EXACT_COLOURS or fewer is decided exactly as before.
 */
export const EXACT_COLOURS = 4096;

/**
 * Work the analysis did, counted for tests and the bench (which must not judge by wall time):
 * colours decided one at a time (withContrast, the costly step), and pixels analysed.
 */
export const analysisWork = { colourDecisions: 0, pixelsAnalysed: 0 };
/**
 * The reduced copy's longer edge: its analysis reads at most 128 × 128 pixels of 4,096 colours.
 * A discovered icon of many colours is stored at most 384 px a side (src/discovery/image.ts), so
 * each reduced pixel stands for a block of 3 × 3 or fewer.
 */
export const REDUCED_EDGE = 128;

/** Whether the ink has more than EXACT_COLOURS distinct colours: counted until it has. */
export function manyColours({ data }: Pixels): boolean {
  const seen = new Set<number>();
  let previous = -1;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3]! < INK_ALPHA) continue;
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    if (rgb === previous) continue;
    previous = rgb;
    seen.add(rgb);
    if (seen.size > EXACT_COLOURS) return true;
  }
  return false;
}

/**
 * Renditions of an image of many colours, decided on a reduced copy: at most REDUCED_EDGE
 * pixels a side (nearest pixel, so ink stays ink and transparency transparent) with every
 * colour quantised to the centre of its 4-bit-a-channel bucket, so the analysis costs the same
 * however many colours the image has. The renditions themselves stay full resolution: each
 * pixel is moved as the reduced pixel it maps to was moved, keeping its own detail, and one the
 * move leaves short of MIN_CONTRAST on the page takes the reduced pixel's new colour.
 */
function fromReducedCopy(rgba: Pixels, tone: LogoTone): RenditionPixels {
  const scale = Math.min(1, REDUCED_EDGE / Math.max(rgba.width, rgba.height));
  const width = Math.max(1, Math.round(rgba.width * scale));
  const height = Math.max(1, Math.round(rgba.height * scale));
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(rgba.height - 1, Math.floor(((y + 0.5) * rgba.height) / height));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(rgba.width - 1, Math.floor(((x + 0.5) * rgba.width) / width));
      const i = (sy * rgba.width + sx) * 4;
      const o = (y * width + x) * 4;
      data[o] = (rgba.data[i]! & 0xf0) | 8;
      data[o + 1] = (rgba.data[i + 1]! & 0xf0) | 8;
      data[o + 2] = (rgba.data[i + 2]! & 0xf0) | 8;
      data[o + 3] = rgba.data[i + 3]!;
    }
  }
  // Which reduced pixel each full-resolution pixel maps to: its row's start and its column.
  const rowOf = Int32Array.from({ length: rgba.height }, (_, y) => Math.min(height - 1, Math.floor((y * height) / rgba.height)) * width);
  const columnOf = Int32Array.from({ length: rgba.width }, (_, x) => Math.min(width - 1, Math.floor((x * width) / rgba.width)));
  const reduced: Pixels = { width, height, channels: 4, data };
  const scratch = scratchFor(reduced)!;
  analysisWork.pixelsAnalysed += width * height;
  // Ink beside ink is a flat mark's detail; on a many-coloured copy every speck is a region of
  // its own, and judging each would make the work grow with them again.
  const onLight = inkOnPage(reduced, "light", scratch, { inkBesideInk: false });
  const onDark = inkOnPage(reduced, "dark", scratch, { inkBesideInk: false });
  const atFullSize = (page: Page, decided: Pixels): Pixels => {
    const pageRgb = PAGES[page];
    const pageY = luminance(pageRgb[0], pageRgb[1], pageRgb[2]);
    // Each reduced pixel's move, worked out once: most full-size pixels map to one that did not move.
    const move = new Int16Array(width * height * 3);
    const moved = new Uint8Array(width * height);
    for (let q = 0; q < width * height; q++) {
      for (let c = 0; c < 3; c++) move[q * 3 + c] = decided.data[q * 4 + c]! - data[q * 4 + c]!;
      moved[q] = move[q * 3] !== 0 || move[q * 3 + 1] !== 0 || move[q * 3 + 2] !== 0 ? 1 : 0;
    }
    const out = new Uint8Array(rgba.data);
    for (let y = 0, i = 0; y < rgba.height; y++) {
      const row = rowOf[y]!;
      for (let x = 0; x < rgba.width; x++, i += 4) {
        const q = row + columnOf[x]!;
        if (moved[q] === 0 || out[i + 3] === 0) continue;
        const r = Math.min(255, Math.max(0, out[i]! + move[q * 3]!));
        const g = Math.min(255, Math.max(0, out[i + 1]! + move[q * 3 + 1]!));
        const b = Math.min(255, Math.max(0, out[i + 2]! + move[q * 3 + 2]!));
        if (contrastRatio(luminance(r, g, b), pageY) >= MIN_CONTRAST) {
          out[i] = r;
          out[i + 1] = g;
          out[i + 2] = b;
        } else {
          out[i] = decided.data[q * 4]!;
          out[i + 1] = decided.data[q * 4 + 1]!;
          out[i + 2] = decided.data[q * 4 + 2]!;
        }
      }
    }
    return { ...rgba, data: out };
  };
  return {
    tone,
    master: rgba,
    light: onLight ? atFullSize("light", onLight.pixels) : null,
    dark: onDark ? atFullSize("dark", onDark.pixels) : null,
    plain: tone !== "opaque" && onLight?.nearWhiteVanishes ? "light" : "master",
  };
}

/** A colour rendition's greyscale: grey + alpha (toGreyAlpha). */
export function greyOf(pixels: Pixels): Pixels {
  if (pixels.channels !== 4) throw new Error("greyscale is made from RGBA pixels");
  return { width: pixels.width, height: pixels.height, channels: 2, data: toGreyAlpha(pixels.data) };
}

/** Linear light → 8-bit sRGB by table (4096 steps are finer than 8-bit sRGB anywhere). */
const ENCODE = Uint8Array.from({ length: 4097 }, (_, i) => fromLinear(i / 4096));

/**
 * RGBA → grey + alpha, grey being the sRGB encoding of the pixel's relative luminance: the
 * grey has the very luminance, and so the WCAG contrast, of the colour it replaces.
 */
export function toGreyAlpha(rgba: Uint8Array): Uint8Array {
  const out = new Uint8Array(rgba.length / 2);
  // Logos are runs of one colour: a pixel like the one before it takes the grey worked out then.
  let previous = -1;
  let grey = 0;
  for (let i = 0, o = 0; i < rgba.length; i += 4, o += 2) {
    const rgb = (rgba[i]! << 16) | (rgba[i + 1]! << 8) | rgba[i + 2]!;
    if (rgb !== previous) {
      previous = rgb;
      grey = ENCODE[Math.round(luminance(rgba[i]!, rgba[i + 1]!, rgba[i + 2]!) * 4096)]!;
    }
    out[o] = grey;
    out[o + 1] = rgba[i + 3]!;
  }
  return out;
}

/**
 * Tone of the visible ink, for the record: the share of opaque pixels that are dark (relative
 * luminance under 0.05, about #3f3f3f) or light (over 0.6). 90 % either way makes the logo
 * `dark` or `light`; an image with almost no transparency brings its own background and is
 * `opaque`. Every 7th pixel is enough to tell. Renditions do not depend on it, except that an
 * `opaque` image is served as it is when no theme is asked for.
 */
export function measureTone(rgba: Uint8Array): LogoTone {
  let sampled = 0;
  let opaque = 0;
  let dark = 0;
  let light = 0;
  for (let i = 0; i < rgba.length; i += 4 * 7) {
    sampled++;
    if (rgba[i + 3]! < INK_ALPHA) continue;
    opaque++;
    const luma = luminance(rgba[i]!, rgba[i + 1]!, rgba[i + 2]!);
    if (luma < 0.05) dark++;
    else if (luma > 0.6) light++;
  }
  if (opaque === 0) return "mixed";
  if (opaque / sampled > 0.98) return "opaque";
  if (dark / opaque >= 0.9) return "dark";
  if (light / opaque >= 0.9) return "light";
  return "mixed";
}

/** A pixel at least half opaque is ink; anything less is where the page shows through. */
const INK_ALPHA = 128;
/** White or near white: as light as #cbcbcb or lighter, with next to no colour. */
const NEAR_WHITE_LUMINANCE = 0.6;
const NEAR_WHITE_CHROMA = 0.05;
/** Share of the ink that must be near-white and vanish for the plain rendition to be the light one. */
const NEAR_WHITE_SHARE = 0.1;
// Aim a little past the bar, so that rounding to 8 bits never lands just under it.
const TARGET_CONTRAST = MIN_CONTRAST * 1.02;

/**
 * The logo as it should be served on `page`, or null when it is legible there as it is.
 *
 * Ink that lacks contrast with the page changes only where the page is actually behind it: the
 * low-contrast pixels reachable from the transparent surroundings (or the image's edge) through
 * other low-contrast pixels. A white play button inside a red shape stays white on a white
 * page, because red surrounds it, not the page. Those pixels get their lightness mirrored
 * (hue and chroma kept; see withContrast), and so do the semi-transparent pixels of their edge.
 *
 * Ink enclosed by changed ink is seen against that ink's new colour: an enclosed region (a
 * white glyph on a black badge) whose edge would lose its contrast against the changed surround
 * is changed the other way, against that surround (see flipRegion).
 *
 * Ink on the mark's own tile is seen against the tile: vanishing ink that rims enclosed regions
 * which read on the page as they are, and which are larger than it (Notion's black outline and
 * N on its white tile), keeps its colours, and so do those regions. The tile is what the page
 * meets.
 */
function inkOnPage(
  rgba: Pixels,
  page: Page,
  scratch: Scratch,
  { inkBesideInk = true }: { inkBesideInk?: boolean } = {},
): { pixels: Pixels; nearWhiteVanishes: boolean } | null {
  const { ink, inkCount, lowCount } = scratch;
  const { width, height, data } = rgba;
  const count = width * height;
  const pageRgb = PAGES[page];
  const pageY = luminance(pageRgb[0], pageRgb[1], pageRgb[2]);
  const direction = page === "dark" ? "lighter" : "darker";
  const low = LOW[page];

  if (lowCount[page] === 0) return null;
  // All of the ink low: every piece of it has a pixel beside the page (its outermost), so all of
  // it vanishes, no other ink is beside it, and all of it moves alike. One pass does what the
  // passes below would (a one-colour mark on its dark page: half of a seed's analyses).
  if (lowCount[page] === inkCount) return allInkOnPage(rgba, page, ink, onPageMap(pageY, direction, page));

  // 1. Vanishing ink: low ink (scratchFor) the page reaches. The queue holds it, in the order it
  //    is found, from its start; the passes below walk it, not the whole image.
  const vanishing = new Uint8Array(count);
  const queue = (scratch.queue ??= new Int32Array(count));
  let head = 0;
  let tail = 0;
  for (let p = 0; p < count; p++) {
    if (ink[p]! & low && touchesPage(p, width, height, ink)) {
      vanishing[p] = 1;
      queue[tail++] = p;
    }
  }
  // Neighbours are listed into `next` rather than visited through a callback: the loops below
  // are the hot ones of an import, and a callback each would keep V8 from inlining any of them.
  const next = new Int32Array(4);
  while (head < tail) {
    for (let n = neighboursOf(queue[head++]!, width, height, next), j = 0; j < n; j++) {
      const q = next[j]!;
      if (ink[q]! & low && !vanishing[q]) {
        vanishing[q] = 1;
        queue[tail++] = q;
      }
    }
  }
  const vanished = tail;
  if (vanished === 0) return null;
  // The vanishing ink's connected components, labelled only once some other ink is found beside
  // it: a plain glyph on transparency, the common logo, needs none.
  let labels: { componentOf: Int32Array; sizes: number[] } | null = null;
  const label = () => {
    labels ??= componentsOf(queue, vanished, vanishing, width, height);
    return labels.componentOf;
  };

  // 2. The regions of other ink beside the vanishing ink. Each is explored once, from the first
  //    of its pixels found beside it; its pixels follow the vanishing ones in the queue, region
  //    after region. A region the page reaches (it touches transparency or the edge) is only
  //    marked explored: the page shows it, and it is judged against the page by step 1.
  const explored = new Uint8Array(count);
  const step = new Int32Array(4);
  const regions: Region[] = [];
  /** Pixels of the regions the page reaches. */
  const open = new Uint8Array(count);
  let anyOpen = false;
  const explore = (start: number) => {
    const region: Region = { start: tail, end: tail, enclosed: true, edge: [0, 0, 0], meets: 0, tile: 0, beside: new Set() };
    head = tail;
    queue[tail++] = start;
    explored[start] = 1;
    while (head < tail) {
      const p = queue[head++]!;
      if (region.enclosed && touchesPage(p, width, height, ink)) region.enclosed = false;
      if (region.enclosed && !(ink[p]! & low)) region.tile++;
      for (let n = neighboursOf(p, width, height, step), j = 0; j < n; j++) {
        const q = step[j]!;
        if (vanishing[q]) {
          if (!region.enclosed) continue;
          region.meets++;
          region.edge[0] += data[p * 4]!;
          region.edge[1] += data[p * 4 + 1]!;
          region.edge[2] += data[p * 4 + 2]!;
          region.beside.add(label()[q]!);
        } else if (ink[q] && !explored[q]) {
          explored[q] = 1;
          queue[tail++] = q;
        }
      }
    }
    region.end = tail;
    if (region.enclosed) regions.push(region);
    else {
      anyOpen = true;
      for (let k = region.start; k < region.end; k++) open[queue[k]!] = 1;
    }
  };
  for (let k = 0; k < vanished; k++) {
    for (let n = neighboursOf(queue[k]!, width, height, next), j = 0; j < n; j++) {
      const q = next[j]!;
      if (ink[q] && !vanishing[q] && !explored[q]) explore(q);
    }
  }

  // 3. The mark's own tile: vanishing ink that rims regions which read on the page as they are,
  //    and which are larger than it (the black outline and inner lines of a white tile), is the
  //    tile's drawing, not ink on the page. The tile is what the page meets; the rim and what the
  //    tile carries (a black N) are seen against the tile, and keep their colours.
  if (anyOpen) label();
  const { componentOf, sizes } = labels ?? { componentOf: null, sizes: [vanished] };
  const componentAt = (p: number) => (componentOf ? componentOf[p]! : 0);
  const tileBeside = new Float64Array(sizes.length);
  for (const region of regions) for (const c of region.beside) tileBeside[c]! += region.tile;
  const rim = sizes.map((size, c) => tileBeside[c]! >= size);

  // How far vanishing ink moves. Mirrored, the far end of its lightness lands on the opposite
  // extreme; but ink drawn beside other ink the page also meets (the white stripes of a badger
  // beside its black ones) would land on that ink's colour. Such ink moves a quarter of the
  // mirrored way past 3:1 (withContrast's "near" reach) when that keeps it further apart from
  // the ink beside it.
  const own = new Float64Array(sizes.length * 3);
  const beside = new Float64Array(sizes.length * 4);
  for (let k = 0; inkBesideInk && anyOpen && k < vanished; k++) {
    const p = queue[k]!;
    const c = componentAt(p);
    if (rim[c]) continue;
    own[c * 3]! += data[p * 4]!;
    own[c * 3 + 1]! += data[p * 4 + 1]!;
    own[c * 3 + 2]! += data[p * 4 + 2]!;
    for (let n = neighboursOf(p, width, height, next), j = 0; j < n; j++) {
      const q = next[j]!;
      if (!open[q]) continue;
      beside[c * 4]! += data[q * 4]!;
      beside[c * 4 + 1]! += data[q * 4 + 1]!;
      beside[c * 4 + 2]! += data[q * 4 + 2]!;
      beside[c * 4 + 3]!++;
    }
  }
  const movesNear = sizes.map((size, c) => {
    if (rim[c] || beside[c * 4 + 3] === 0) return false;
    analysisWork.colourDecisions += 2;
    const colour = mean([own[c * 3]!, own[c * 3 + 1]!, own[c * 3 + 2]!], size);
    const besideY = luminance(...mean([beside[c * 4]!, beside[c * 4 + 1]!, beside[c * 4 + 2]!], beside[c * 4 + 3]!));
    const apart = (reach: "mirror" | "near") =>
      contrastRatio(luminance(...withContrast(colour, pageY, direction, TARGET_CONTRAST, reach)), besideY);
    return apart("near") > apart("mirror");
  });

  // 4. The vanishing ink's new colours, and their edge's: the pixels beside them that are
  //    neither ink nor transparent (an edge pixel beside several is written again, the same colour).
  const out = new Uint8Array(data);
  const onPage = onPageMap(pageY, direction, page);
  let nearWhite = 0;
  let changed = 0;
  const nearWhiteOf = new Map<number, boolean>();
  const onPageNear = movesNear.some(Boolean) ? colourMap(pageY, direction, undefined, "near") : onPage;
  // Runs of one colour: a pixel like the one before it is mapped as that one was.
  let last = -1;
  let lastMap = onPage;
  let mapped = 0;
  const change = (p: number, map: (rgb: number) => number) => {
    const i = p * 4;
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    if (rgb !== last || map !== lastMap) {
      last = rgb;
      lastMap = map;
      mapped = map(rgb);
    }
    writeRgb(out, i, mapped);
    return rgb;
  };
  /** Each component's new colours, summed. */
  const changedOwn = new Float64Array(sizes.length * 3);
  for (let k = 0; k < vanished; k++) {
    const p = queue[k]!;
    const c = componentAt(p);
    if (rim[c]) continue;
    changed++;
    const map = movesNear[c] ? onPageNear : onPage;
    const rgb = change(p, map);
    changedOwn[c * 3]! += out[p * 4]!;
    changedOwn[c * 3 + 1]! += out[p * 4 + 1]!;
    changedOwn[c * 3 + 2]! += out[p * 4 + 2]!;
    if (page === "light" && isNearWhite(rgb, nearWhiteOf)) nearWhite++;
    for (let n = neighboursOf(p, width, height, next), j = 0; j < n; j++) {
      const q = next[j]!;
      if (!ink[q] && data[q * 4 + 3]! > 0) change(q, map);
    }
  }
  if (changed === 0) return null;

  // 5. Enclosed ink that sat on changed ink is seen against that ink's new colour, and changed
  //    the other way where it would lose its contrast there. Ink drawn on such a region (the
  //    eye of a white horse on a black badge) is then seen against the region's new colour.
  for (const region of regions) {
    if (region.meets === 0 || [...region.beside].some((c) => rim[c])) continue;
    // The surround as it now is: the new colours of the vanishing ink around the region, all of
    // it, not only the pixels beside it (which are mostly its anti-aliased edge).
    const around = [0, 0, 0];
    let aroundSize = 0;
    for (const c of region.beside) {
      around[0]! += changedOwn[c * 3]!;
      around[1]! += changedOwn[c * 3 + 1]!;
      around[2]! += changedOwn[c * 3 + 2]!;
      aroundSize += sizes[c]!;
    }
    const surroundY = luminance(...mean(around, aroundSize));
    if (contrastRatio(luminance(...mean(region.edge, region.meets)), surroundY) >= MIN_CONTRAST) continue;
    flipRegion(data, out, queue.subarray(region.start, region.end), surroundY, direction);
  }

  return { pixels: { ...rgba, data: out }, nearWhiteVanishes: nearWhite >= NEAR_WHITE_SHARE * inkCount };
}

/** How ink that vanishes on `page` moves: its lightness mirrored past the bar (withContrast). */
const onPageMap = (pageY: number, direction: "lighter" | "darker", page: Page) => colourMap(pageY, direction, pageColours[page]);

/**
 * inkOnPage where all of the ink vanishes: each ink pixel moved by `onPage`, and so is every
 * pixel of its edge (neither ink nor transparent, beside ink), in one pass over the image.
 */
function allInkOnPage(rgba: Pixels, page: Page, ink: Uint8Array, onPage: (rgb: number) => number) {
  const { width, height, data } = rgba;
  const out = new Uint8Array(data);
  const nearWhiteOf = new Map<number, boolean>();
  let inkCount = 0;
  let nearWhite = 0;
  let last = -1;
  let mapped = 0;
  let white = false;
  const next = new Int32Array(4);
  for (let p = 0, i = 0; p < width * height; p++, i += 4) {
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    if (ink[p]) {
      if (rgb !== last) {
        last = rgb;
        mapped = onPage(rgb);
        white = page === "light" && isNearWhite(rgb, nearWhiteOf);
      }
      writeRgb(out, i, mapped);
      inkCount++;
      if (white) nearWhite++;
    } else if (data[i + 3]! > 0) {
      for (let n = neighboursOf(p, width, height, next), j = 0; j < n; j++) {
        if (!ink[next[j]!]) continue;
        writeRgb(out, i, onPage(rgb));
        break;
      }
    }
  }
  return { pixels: { ...rgba, data: out }, nearWhiteVanishes: nearWhite >= NEAR_WHITE_SHARE * inkCount };
}

/** An enclosed region of other ink beside vanishing ink (inkOnPage, step 2). */
interface Region {
  /** Its pixels: the queue from `start` to `end`. */
  start: number;
  end: number;
  /** The page reaches none of it. The rest is only known for enclosed regions. */
  enclosed: boolean;
  /**
   * Sum of the colours of its pixels where it meets the vanishing ink (what is seen against the
   * surround, such as a white ring around a black disc), each as often as it meets it, and how
   * many meetings there are.
   */
  edge: [number, number, number];
  meets: number;
  /** Its pixels that contrast with the page as they are. */
  tile: number;
  /** The components of vanishing ink beside it (componentsOf). */
  beside: Set<number>;
}

/**
 * Changes an enclosed region against its surround's new colour (of luminance `surroundY`, moved
 * in `direction`): its ink is moved the other way until it has the contrast. Ink of the region
 * that needed no move, but that contrasted with what moved and no longer does (a horse's black
 * eye on a white horse now black), is moved away from the region's new colour, in `direction`:
 * what was drawn on the region stays legible on it.
 */
function flipRegion(data: Uint8Array, out: Uint8Array, pixels: Int32Array, surroundY: number, direction: "lighter" | "darker"): void {
  const onSurround = colourMap(surroundY, direction === "lighter" ? "darker" : "lighter");
  const before: [number, number, number] = [0, 0, 0];
  const after: [number, number, number] = [0, 0, 0];
  let moved = 0;
  for (const p of pixels) {
    const i = p * 4;
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    const mapped = onSurround(rgb);
    if (mapped === rgb) continue;
    writeRgb(out, i, mapped);
    before[0] += data[i]!;
    before[1] += data[i + 1]!;
    before[2] += data[i + 2]!;
    after[0] += mapped >> 16;
    after[1] += (mapped >> 8) & 255;
    after[2] += mapped & 255;
    moved++;
  }
  if (moved === 0 || moved === pixels.length) return;
  const wasY = luminance(...mean(before, moved));
  const isY = luminance(...mean(after, moved));
  const onRegion = colourMap(isY, direction);
  for (const p of pixels) {
    const i = p * 4;
    if (out[i] !== data[i] || out[i + 1] !== data[i + 1] || out[i + 2] !== data[i + 2]) continue;
    const y = luminance(data[i]!, data[i + 1]!, data[i + 2]!);
    if (contrastRatio(y, wasY) < MIN_CONTRAST || contrastRatio(y, isY) >= MIN_CONTRAST) continue;
    writeRgb(out, i, onRegion((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!));
  }
}

/**
 * The connected components of the vanishing ink (the queue's first `vanished` pixels): each
 * pixel's component, and each component's size in pixels.
 */
function componentsOf(queue: Int32Array, vanished: number, vanishing: Uint8Array, width: number, height: number) {
  const componentOf = new Int32Array(vanishing.length).fill(-1);
  const sizes: number[] = [];
  const stack = new Int32Array(vanished);
  const next = new Int32Array(4);
  for (let k = 0; k < vanished; k++) {
    const start = queue[k]!;
    if (componentOf[start] !== -1) continue;
    const c = sizes.length;
    let size = 0;
    let top = 0;
    stack[top++] = start;
    componentOf[start] = c;
    while (top > 0) {
      const p = stack[--top]!;
      size++;
      for (let n = neighboursOf(p, width, height, next), j = 0; j < n; j++) {
        const q = next[j]!;
        if (vanishing[q] && componentOf[q] === -1) {
          componentOf[q] = c;
          stack[top++] = q;
        }
      }
    }
    sizes.push(size);
  }
  return { componentOf, sizes };
}

/** White or near white (remembered in `known` by packed colour): see NEAR_WHITE_LUMINANCE. */
function isNearWhite(rgb: number, known: Map<number, boolean>): boolean {
  let white = known.get(rgb);
  if (white === undefined) {
    const colour: Rgb = [rgb >> 16, (rgb >> 8) & 255, rgb & 255];
    white = luminance(...colour) >= NEAR_WHITE_LUMINANCE && toOklch(colour).c <= NEAR_WHITE_CHROMA;
    known.set(rgb, white);
  }
  return white;
}

/**
 * What both pages' passes share: which pixels are ink, and on which page each is low (lacks
 * contrast with it), decided in one pass for both; how many are either; and a queue as long as
 * the image, made when a page first needs it. `ink[p]` is 0 where the page shows through, else
 * INK with LOW[page] set where it is low on that page.
 */
interface Scratch {
  ink: Uint8Array;
  inkCount: number;
  lowCount: Record<Page, number>;
  queue: Int32Array | null;
}

const INK = 1;
const LOW: Record<Page, number> = { light: 2, dark: 4 };

/** Contrast under the bar on a page means a luminance between these two (WCAG's ratio solved for Y). */
const lowRange = (page: Page) => {
  const [r, g, b] = PAGES[page];
  const pageY = luminance(r, g, b);
  return { darkest: (pageY + 0.05) / MIN_CONTRAST - 0.05, lightest: MIN_CONTRAST * (pageY + 0.05) - 0.05 };
};
const LOW_RANGE: Record<Page, { darkest: number; lightest: number }> = { light: lowRange("light"), dark: lowRange("dark") };

/** The scratch of an image, or null once its ink has more than `colourLimit` distinct colours (manyColours). */
function scratchFor({ width, height, data }: Pixels, colourLimit = Number.POSITIVE_INFINITY): Scratch | null {
  const count = width * height;
  const colours = new Set<number>();
  const counting = colourLimit !== Number.POSITIVE_INFINITY;
  const ink = new Uint8Array(count);
  const lowCount = { light: 0, dark: 0 };
  const { light, dark } = LOW_RANGE;
  let inkCount = 0;
  // Runs of one colour: a pixel like the one before it is classed as that one was.
  let previous = -1;
  let inkClass = INK;
  for (let p = 0, i = 0; p < count; p++, i += 4) {
    if (data[i + 3]! < INK_ALPHA) continue;
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    if (rgb !== previous) {
      previous = rgb;
      if (counting && colours.add(rgb).size > colourLimit) return null;
      const y = luminance(data[i]!, data[i + 1]!, data[i + 2]!);
      inkClass = INK | (y > light.darkest && y < light.lightest ? LOW.light : 0) | (y > dark.darkest && y < dark.lightest ? LOW.dark : 0);
    }
    ink[p] = inkClass;
    inkCount++;
    if (inkClass & LOW.light) lowCount.light++;
    if (inkClass & LOW.dark) lowCount.dark++;
  }
  return { ink, inkCount, lowCount, queue: null };
}

const mean = (sum: readonly number[], n: number): Rgb => [Math.round(sum[0]! / n), Math.round(sum[1]! / n), Math.round(sum[2]! / n)];

/**
 * withContrast over packed 0xRRGGBB colours, remembered: a logo has few distinct colours, and
 * logos share many (the anti-aliased edges of black or white ink). The pages' own maps are kept
 * across logos, which is most of what a bulk import saves here; a surround's, for one region.
 */
function colourMap(
  backgroundY: number,
  direction: "lighter" | "darker",
  known: BoundedCache<number, number> = new BoundedCache(1 << 16),
  reach: "mirror" | "near" = "mirror",
): (rgb: number) => number {
  return (rgb) => {
    let mapped = known.get(rgb);
    if (mapped === undefined) {
      analysisWork.colourDecisions++;
      const [r, g, b] = withContrast([rgb >> 16, (rgb >> 8) & 255, rgb & 255], backgroundY, direction, TARGET_CONTRAST, reach);
      mapped = (r << 16) | (g << 8) | b;
      known.set(rgb, mapped);
    }
    return mapped;
  };
}

/** The pages' colour maps, kept for the isolate or thread (16,384 colours each at most). */
const pageColour = (page: Page) =>
  isolateCache<number, number>({
    name: `images.${page}PageColours`,
    holds: `a colour and what it becomes on a ${page} page`,
    capacity: 1 << 14,
    entryBytes: 8 + 8 + MAP_ENTRY_BYTES,
  });
const pageColours: Record<Page, BoundedCache<number, number>> = { light: pageColour("light"), dark: pageColour("dark") };

function writeRgb(out: Uint8Array, i: number, rgb: number): void {
  out[i] = rgb >> 16;
  out[i + 1] = (rgb >> 8) & 255;
  out[i + 2] = rgb & 255;
}

/** On the image's edge, or beside a pixel that is not ink: the page shows next to it. */
function touchesPage(p: number, width: number, height: number, ink: Uint8Array): boolean {
  const x = p % width;
  if (x === 0 || x === width - 1 || p < width || p >= width * (height - 1)) return true;
  return !ink[p - 1] || !ink[p + 1] || !ink[p - width] || !ink[p + width];
}

/** The 4-neighbours of pixel `p` (left, right, above, below, those inside the image) into `into`; how many. */
function neighboursOf(p: number, width: number, height: number, into: Int32Array): number {
  const x = p % width;
  let n = 0;
  if (x > 0) into[n++] = p - 1;
  if (x < width - 1) into[n++] = p + 1;
  if (p >= width) into[n++] = p - width;
  if (p < width * (height - 1)) into[n++] = p + width;
  return n;
}

/** The colour most of the ink has (4-bit buckets, averaged), for tests and metadata; null without ink. */
export function dominantInk(rgba: Pixels): Rgb | null {
  const sums = new Float64Array(4096 * 4);
  const { data } = rgba;
  const step = rgba.channels;
  for (let i = 0; i < data.length; i += step) {
    if (data[i + step - 1]! < INK_ALPHA) continue;
    const [r, g, b] = step === 4 ? [data[i]!, data[i + 1]!, data[i + 2]!] : [data[i]!, data[i]!, data[i]!];
    const bucket = ((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4);
    sums[bucket * 4]! += r;
    sums[bucket * 4 + 1]! += g;
    sums[bucket * 4 + 2]! += b;
    sums[bucket * 4 + 3]!++;
  }
  let best = -1;
  for (let bucket = 0; bucket < 4096; bucket++) if (sums[bucket * 4 + 3]! > (best === -1 ? 0 : sums[best * 4 + 3]!)) best = bucket;
  if (best === -1) return null;
  const n = sums[best * 4 + 3]!;
  return [Math.round(sums[best * 4]! / n), Math.round(sums[best * 4 + 1]! / n), Math.round(sums[best * 4 + 2]! / n)];
}
