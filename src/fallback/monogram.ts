import { domainToUnicode } from "node:url";
import { contrastOf, type Rgb } from "../images/colour";
import { escapeMarkup } from "../lib/markup";

/**
 * The monogram that stands in for a logo that does not exist (`fallback=monogram`): the first
 * letter of the company's name or of its domain on the brand colour, or on a colour derived
 * from the domain so a domain always gets the same one.
 *
 * It is an SVG we write ourselves, not a PNG. Text must render in any script (a domain may be
 * Chinese, Arabic, Devanagari, …): a PNG would need a rasteriser with fonts for every script.
 * The Images binding draws no text, and on Cloudflare it does not rasterise SVG at all (only
 * the local binding, sharp, does), so an SVG rasterised by it would work on a laptop and fail in
 * production. Served as SVG, the letter is drawn by the viewer's own fonts, locally and in
 * production alike, crisp at any size. The document holds nothing but a rectangle and one
 * escaped character, and is served with a CSP that allows nothing to load or run.
 */
export interface MonogramRequest {
  /** Normalised (punycode) host the lookup named. */
  domain: string;
  /** The company's or site's name, when known. */
  name: string | null;
  /** `#rrggbb`, when known. */
  brandColor: string | null;
  size: number;
  theme?: "light" | "dark" | undefined;
  greyscale: boolean;
}

export const MONOGRAM_CONTENT_TYPE = "image/svg+xml; charset=utf-8";
export const MONOGRAM_HEADERS = {
  "Content-Type": MONOGRAM_CONTENT_TYPE,
  "Content-Security-Policy": "default-src 'none'",
  "X-Content-Type-Options": "nosniff",
} as const;

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The digraph letters whose capital at a word's start is their title case (ǅ, ǈ, ǋ, ǲ), not all capitals. */
const TITLECASE: Record<string, string> = {
  "\u01C4": "\u01C5",
  "\u01C6": "\u01C5",
  "\u01C7": "\u01C8",
  "\u01C9": "\u01C8",
  "\u01CA": "\u01CB",
  "\u01CC": "\u01CB",
  "\u01F1": "\u01F2",
  "\u01F3": "\u01F2",
};

/**
 * The first letter or digit of `text` as one grapheme (combining marks kept), upper-cased where
 * the script has case and a capital begins a word: not where upper case is two letters (ß → SS,
 * ﬁ → FI), nor Georgian, whose capitals (Mtavruli) do not begin words and many fonts lack; a
 * digraph letter takes its title case (ǆ → ǅ).
 */
export function firstLetter(text: string): string | null {
  for (const { segment } of segmenter.segment(text.normalize("NFC"))) {
    if (!/^[\p{L}\p{N}]/u.test(segment)) continue;
    const upper = (TITLECASE[segment[0]!] ? TITLECASE[segment[0]!]! + segment.slice(1) : segment.toLocaleUpperCase()).normalize("NFC");
    return [...segmenter.segment(upper)].length > 1 || /^[\u10D0-\u10FF]/u.test(segment) ? segment : upper;
  }
  return null;
}

/** The domain's own name in Unicode (`xn--bcher-kva.ch` → `bücher.ch`). */
export function unicodeDomain(domain: string): string {
  return domainToUnicode(domain) || domain;
}

export function monogramLetter(name: string | null, domain: string): string {
  return (name && firstLetter(name)) || firstLetter(unicodeDomain(domain)) || "?";
}

/**
 * A stable colour per domain: the hue from an FNV-1a hash, the saturation fixed, and the
 * lightness 0.42 or, for hues that are bright there (yellow-greens, teals), as much darker as
 * white text needs to read on it at WCAG's 4.5:1.
 */
export function domainColour(domain: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < domain.length; i++) hash = Math.imul(hash ^ domain.charCodeAt(i), 0x01000193);
  const hue = (hash >>> 0) % 360;
  let lightness = 0.42;
  let hex = hslToHex(hue, 0.55, lightness);
  while (contrastOf(rgbOf(hex), WHITE) < 4.5 && lightness > 0.2) hex = hslToHex(hue, 0.55, (lightness -= 0.01));
  return hex;
}

function hslToHex(hue: number, saturation: number, lightness: number): string {
  const a = saturation * Math.min(lightness, 1 - lightness);
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return toHex([channel(0), channel(8), channel(4)]);
}

const toHex = (rgb: readonly number[]) =>
  `#${rgb
    .map((v) =>
      Math.max(0, Math.min(255, Math.round(v)))
        .toString(16)
        .padStart(2, "0"),
    )
    .join("")}`;
const rgbOf = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as unknown as Rgb;
const WHITE: Rgb = [255, 255, 255];
const DARK_INK = "#1f2328";
/** Rec. 709 luma of sRGB values, 0–1 (as src/images/renditions.ts measures tone). */
const luma = ([r, g, b]: readonly number[]) => (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
const mix = (rgb: readonly number[], towards: number, share: number) => rgb.map((v) => v + (towards - v) * share);

/** The tile's colour for the request: greyscale as luma, and never so close to the page's background that the tile vanishes. */
export function tileColour(request: Pick<MonogramRequest, "domain" | "brandColor" | "theme" | "greyscale">): string {
  let rgb: readonly number[] = rgbOf(request.brandColor ?? domainColour(request.domain));
  if (request.theme === "dark" && luma(rgb) < 0.18) rgb = mix(rgb, 255, 0.3);
  if (request.theme === "light" && luma(rgb) > 0.85) rgb = mix(rgb, 0, 0.3);
  if (request.greyscale) {
    const grey = luma(rgb) * 255;
    rgb = [grey, grey, grey];
  }
  return toHex(rgb);
}

export function monogramSvg(request: MonogramRequest): string {
  const letter = escapeMarkup(monogramLetter(request.name, request.domain));
  const tile = tileColour(request);
  // Whichever of white and near-black reads better on the tile, by WCAG contrast.
  const ink = contrastOf(rgbOf(tile), WHITE) >= contrastOf(rgbOf(tile), rgbOf(DARK_INK)) ? "#ffffff" : DARK_INK;
  const size = request.size;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 100 100" role="img" aria-label="${letter}">` +
    `<rect width="100" height="100" rx="18" fill="${tile}"/>` +
    `<text x="50" y="50" dominant-baseline="central" text-anchor="middle" font-family="system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans',sans-serif" font-size="56" font-weight="600" fill="${ink}">${letter}</text>` +
    `</svg>`
  );
}
