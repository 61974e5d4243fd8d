import { contrastRatio, luminance, toOklch } from "../../src/images/colour";
import type { Pixels } from "../../src/images/renditions";

/**
 * Inner detail of a mark, and how much of it a rendition loses: measured over the pixels, so a
 * sweep over the whole seed can tell which marks a theme empties (a black N on its own white
 * tile turned black on black) without anyone looking at them.
 *
 * Detail is a pair of opaque pixels STEP apart (across, and down) whose colours have
 * DETAIL_CONTRAST or more between them in the master: two inks of the mark meeting, such as a
 * glyph and the tile it sits on. Pairs STEP apart rather than neighbours, so that an edge drawn
 * with anti-aliasing still counts (its grey steps are short of the bar one by one). A rendition
 * loses a pair when it makes the two pixels nearly one colour, less than MERGED apart in OKLab
 * (lightness, and hue and chroma too: two inks told apart by hue alone are still told apart).
 * Edges against the page are the renditions' own work (each moves ink away from the page) and
 * are not inner detail; renditions keep alpha, so the pairs are the same pixels in both.
 */
export const STEP = 2;
export const DETAIL_CONTRAST = 3;
export const MERGED = 0.05;
/** A mark loses its inner detail when a rendition merges this share of its pairs, and at least MIN_LOST of them. */
export const LOST_SHARE = 0.1;
export const MIN_LOST = 20;

export interface InnerDetail {
  /** Pairs of the master's inks that contrast at DETAIL_CONTRAST or more. */
  pairs: number;
  /** Those the rendition makes nearly one colour. */
  lost: number;
}

export function innerDetailLost(master: Pixels, rendition: Pixels): InnerDetail {
  if (master.channels !== 4 || rendition.channels !== 4) throw new Error("inner detail is measured on RGBA pixels");
  if (master.width !== rendition.width || master.height !== rendition.height) throw new Error("a rendition has its master's size");
  const before = luminances(master);
  const after = oklab(rendition);
  const { width, height } = master;
  let pairs = 0;
  let lost = 0;
  const pair = (p: number, q: number) => {
    const a = before[p]!;
    const b = before[q]!;
    if (a < 0 || b < 0 || contrastRatio(a, b) < DETAIL_CONTRAST) return;
    pairs++;
    after.at(p);
    after.at(q);
    const distance = Math.hypot(
      after.lab[p * 3]! - after.lab[q * 3]!,
      after.lab[p * 3 + 1]! - after.lab[q * 3 + 1]!,
      after.lab[p * 3 + 2]! - after.lab[q * 3 + 2]!,
    );
    if (distance < MERGED) lost++;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (x + STEP < width) pair(p, p + STEP);
      if (y + STEP < height) pair(p, p + STEP * width);
    }
  }
  return { pairs, lost };
}

/** Whether a rendition's loss is a mark losing its inner detail (LOST_SHARE, MIN_LOST). */
export const losesDetail = ({ pairs, lost }: InnerDetail) => lost >= MIN_LOST && lost >= LOST_SHARE * pairs;

/** Each pixel's relative luminance, or -1 where it is not fully opaque (the page shows through). */
function luminances({ width, height, data }: Pixels): Float64Array {
  const out = new Float64Array(width * height);
  let previous = -1;
  let y = 0;
  for (let p = 0, i = 0; p < out.length; p++, i += 4) {
    if (data[i + 3]! < 255) {
      out[p] = -1;
      continue;
    }
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    if (rgb !== previous) {
      previous = rgb;
      y = luminance(data[i]!, data[i + 1]!, data[i + 2]!);
    }
    out[p] = y;
  }
  return out;
}

/**
 * Each pixel's OKLab coordinates, three numbers a pixel in `lab`, worked out by `at(p)` when a
 * pair first needs them: most pixels are in no pair that counts (transparent, or flat ink).
 */
function oklab({ width, height, data }: Pixels): { lab: Float64Array; at: (p: number) => void } {
  const lab = new Float64Array(width * height * 3);
  const done = new Uint8Array(width * height);
  const known = new Map<number, readonly [number, number, number]>();
  const at = (p: number) => {
    if (done[p]) return;
    done[p] = 1;
    const i = p * 4;
    const rgb = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    let coordinates = known.get(rgb);
    if (!coordinates) {
      const { l, c, h } = toOklch([data[i]!, data[i + 1]!, data[i + 2]!]);
      coordinates = [l, c * Math.cos((h * Math.PI) / 180), c * Math.sin((h * Math.PI) / 180)];
      known.set(rgb, coordinates);
    }
    lab[p * 3] = coordinates[0];
    lab[p * 3 + 1] = coordinates[1];
    lab[p * 3 + 2] = coordinates[2];
  };
  return { lab, at };
}
