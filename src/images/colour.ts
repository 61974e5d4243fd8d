/**
 * Colour arithmetic for renditions: sRGB, relative luminance and contrast as WCAG 2.2 defines
 * them (https://www.w3.org/TR/WCAG22/#dfn-relative-luminance, #dfn-contrast-ratio), and OKLab /
 * OKLCH (Björn Ottosson, https://bottosson.github.io/posts/oklab/, the matrices of CSS Color 4)
 * to change a colour's lightness while keeping its hue and chroma.
 *
 * Written out rather than taken from a colour library: these run once per pixel of a logo, and
 * the few formulas here on plain numbers cost a fraction of a library's object-per-colour API.
 */
export type Rgb = readonly [r: number, g: number, b: number];

/** 8-bit sRGB channel → linear light, by table. */
const LINEAR = Float64Array.from({ length: 256 }, (_, v) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

export const toLinear = (channel: number): number => LINEAR[channel]!;

/** Linear light (0–1, clamped) → 8-bit sRGB channel. */
export function fromLinear(value: number): number {
  const c = value <= 0 ? 0 : Math.min(value, 1);
  const encoded = c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055;
  return Math.round(encoded * 255);
}

/** WCAG relative luminance of an 8-bit sRGB colour. */
export function luminance(r: number, g: number, b: number): number {
  return 0.2126 * LINEAR[r]! + 0.7152 * LINEAR[g]! + 0.0722 * LINEAR[b]!;
}

/** WCAG contrast ratio of two relative luminances (1 to 21). */
export function contrastRatio(y1: number, y2: number): number {
  return (Math.max(y1, y2) + 0.05) / (Math.min(y1, y2) + 0.05);
}

export const contrastOf = (a: Rgb, b: Rgb) => contrastRatio(luminance(...a), luminance(...b));

/** Linear sRGB → OKLab [L, a, b]. */
function linearToOklab(r: number, g: number, b: number): [number, number, number] {
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/**
 * OKLab → linear sRGB, possibly outside 0–1 (out of gamut), written into `out`: this runs
 * hundreds of times for each new colour a rendition maps (withContrast), so it allocates nothing.
 */
function oklabToLinear(L: number, a: number, b: number, out: Float64Array): Float64Array {
  // Cubes by multiplication: `** 3` goes through pow, some fifty times slower.
  const l_ = L + 0.3963377774 * a + 0.2158037573 * b;
  const m_ = L - 0.1055613458 * a - 0.0638541728 * b;
  const s_ = L - 0.0894841775 * a - 1.291485548 * b;
  const l = l_ * l_ * l_;
  const m = m_ * m_ * m_;
  const s = s_ * s_ * s_;
  out[0] = 4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s;
  out[1] = -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s;
  out[2] = -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s;
  return out;
}

export interface Oklch {
  /** Perceived lightness, 0 (black) to 1 (white). */
  l: number;
  /** Colourfulness, 0 for greys, about 0.37 at most within sRGB. */
  c: number;
  /** Hue angle in degrees, 0–360. */
  h: number;
}

export function toOklch([r, g, b]: Rgb): Oklch {
  const [L, A, B] = linearToOklab(LINEAR[r]!, LINEAR[g]!, LINEAR[b]!);
  const hue = (Math.atan2(B, A) * 180) / Math.PI;
  return { l: L, c: Math.hypot(A, B), h: hue < 0 ? hue + 360 : hue };
}

/** Smallest angle between two hues, in degrees. */
export function hueDistance(h1: number, h2: number): number {
  const d = Math.abs(h1 - h2) % 360;
  return d > 180 ? 360 - d : d;
}

const EPSILON = 1e-4;
/** How much of the mirrored move past the threshold withContrast's "near" reach keeps. */
const NEAR_SHARE = 0.25;
const inGamut = (rgb: Float64Array) =>
  rgb[0]! >= -EPSILON &&
  rgb[0]! <= 1 + EPSILON &&
  rgb[1]! >= -EPSILON &&
  rgb[1]! <= 1 + EPSILON &&
  rgb[2]! >= -EPSILON &&
  rgb[2]! <= 1 + EPSILON;

/** A hue as the cosine and sine of its angle, which every step of the searches below reuses. */
interface Hue {
  cos: number;
  sin: number;
}
const hueOf = (h: number): Hue => {
  const radians = (h * Math.PI) / 180;
  return { cos: Math.cos(radians), sin: Math.sin(radians) };
};

/**
 * The colour of lightness `l`, hue `hue` and as much of chroma `c` as sRGB can show at that
 * lightness: chroma is reduced until the colour fits (CSS Color 4 gamut mapping, without the
 * final clip's hue shift), so the hue is kept exactly. Linear sRGB, written into `out` (which
 * also holds the search's candidates until the last one is written).
 */
function oklchToLinear(l: number, c: number, { cos, sin }: Hue, out: Float64Array): Float64Array {
  oklabToLinear(l, c * cos, c * sin, out);
  if (inGamut(out) || l <= 0 || l >= 1) return out;
  let low = 0;
  let high = c;
  for (let i = 0; i < 12; i++) {
    const mid = (low + high) / 2;
    if (inGamut(oklabToLinear(l, mid * cos, mid * sin, out))) low = mid;
    else high = mid;
  }
  return oklabToLinear(l, low * cos, low * sin, out);
}

const luminanceOfLinear = (rgb: Float64Array) =>
  0.2126 * Math.min(1, Math.max(0, rgb[0]!)) + 0.7152 * Math.min(1, Math.max(0, rgb[1]!)) + 0.0722 * Math.min(1, Math.max(0, rgb[2]!));

export function oklchToRgb({ l, c, h }: Oklch): [number, number, number] {
  const rgb = oklchToLinear(Math.min(1, Math.max(0, l)), c, hueOf(h), new Float64Array(3));
  return [fromLinear(rgb[0]!), fromLinear(rgb[1]!), fromLinear(rgb[2]!)];
}

/**
 * A colour given `contrast` against a background of luminance `backgroundY`, by moving its
 * OKLCH lightness in `direction` (lighter or darker) with hue and chroma kept: lightness is
 * mirrored about the point where the contrast is just reached, stretched so that the far end
 * (black when lightening, white when darkening) lands on the opposite extreme. The map is
 * continuous, so a gradient that crosses the threshold stays a gradient. Colours that already
 * have the contrast come back unchanged. With `reach` "near" the colour moves a quarter of
 * the mirrored way past that point (NEAR_SHARE): far enough for the contrast, and no further
 * towards the opposite extreme, still continuous.
 */
export function withContrast(
  rgb: Rgb,
  backgroundY: number,
  direction: "lighter" | "darker",
  contrast: number,
  reach: "mirror" | "near" = "mirror",
): Rgb {
  const y = luminance(...rgb);
  if (contrastRatio(y, backgroundY) >= contrast) return rgb;
  const { l, c, h } = toOklch(rgb);
  const lighter = direction === "lighter";
  const target = lighter ? contrast * (backgroundY + 0.05) - 0.05 : (backgroundY + 0.05) / contrast - 0.05;
  // The lightness at which the colour's luminance reaches the target (luminance grows with
  // lightness at fixed hue and chroma); past either end the extreme is the best there is.
  let low = lighter ? l : 0;
  let high = lighter ? 1 : l;
  const hue = hueOf(h);
  const candidate = new Float64Array(3);
  for (let i = 0; i < 20; i++) {
    const mid = (low + high) / 2;
    if (luminanceOfLinear(oklchToLinear(mid, c, hue, candidate)) >= target) high = mid;
    else low = mid;
  }
  const threshold = lighter ? high : low;
  const mirrored = lighter
    ? threshold + (threshold - l) * ((1 - threshold) / Math.max(threshold, EPSILON))
    : threshold - (l - threshold) * (threshold / Math.max(1 - threshold, EPSILON));
  return oklchToRgb({ l: reach === "near" ? threshold + (mirrored - threshold) * NEAR_SHARE : mirrored, c, h });
}
