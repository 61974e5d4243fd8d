import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";

/**
 * A synthetic logo corpus for the import benchmark, generated deterministically and cached:
 * N companies with one logo each, as PNG files or as SVG files, with a manifest.
 *
 * Each logo is 6 to 14 shapes (circles, rounded bars, polygons, curved strokes like letters),
 * flat colours or a gradient, some outlined; no text (text would render differently with each
 * machine's fonts). Tones are mixed as in a
 * real catalogue: dark ink, light ink, colour, and logos on a background of their own. PNGs are
 * 128 to 512 pixels wide with aspect ratios from 1:1 to 4:1, saved at zlib level 9 as logos
 * found on the web usually are; SVGs are the same drawings as vectors.
 */
export type CorpusKind = "png" | "svg";

export interface Corpus {
  kind: CorpusKind;
  dir: string;
  manifest: string;
  logos: number;
  /** Mean size of an image file. */
  meanBytes: number;
}

/** A small deterministic generator (mulberry32), so that every machine builds the same corpus. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const palette = ["#e63946", "#1d3557", "#2a9d8f", "#f4a261", "#6a4c93", "#0077b6", "#ff006e", "#3a86ff", "#8ac926", "#ffbe0b"];

function drawing(index: number): { svg: string; width: number } {
  const next = random(index + 1);
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
  const width = 128 + Math.floor(next() * 385);
  const height = Math.max(32, Math.round(width / (1 + next() * 3)));
  const toneRoll = next();
  // 20 % dark ink, 10 % light ink, 55 % colour, 15 % on a background of their own.
  const tone = toneRoll < 0.2 ? "dark" : toneRoll < 0.3 ? "light" : toneRoll < 0.85 ? "colour" : "opaque";
  const ink = () =>
    tone === "dark" ? pick(["#111111", "#1a1a2e", "#222222"]) : tone === "light" ? pick(["#fafafa", "#f0f0f0", "#ffffff"]) : pick(palette);
  // A third of the colour logos use a gradient, as many real ones do.
  const gradient = tone === "colour" && next() < 0.33;
  const defs = gradient
    ? `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${pick(palette)}"/><stop offset="1" stop-color="${pick(palette)}"/></linearGradient></defs>`
    : "";
  const shapes: string[] = [];
  if (tone === "opaque") shapes.push(`<rect width="${width}" height="${height}" rx="${Math.round(height / 8)}" fill="${pick(palette)}"/>`);
  const count = 6 + Math.floor(next() * 9);
  for (let i = 0; i < count; i++) {
    const x = Math.round(next() * width * 0.85);
    const y = Math.round(next() * height * 0.8);
    const size = Math.round((0.1 + next() * 0.4) * height);
    const fill = tone === "opaque" ? pick(["#ffffff", "#111111"]) : gradient && next() < 0.5 ? "url(#g)" : ink();
    const stroke = next() < 0.3 ? ` fill-opacity="0.85" stroke="${ink()}" stroke-width="${1 + Math.floor(next() * 3)}"` : "";
    const kind = Math.floor(next() * 4);
    if (kind === 0) shapes.push(`<circle cx="${x + size / 2}" cy="${y + size / 2}" r="${size / 2}" fill="${fill}"${stroke}/>`);
    else if (kind === 1)
      shapes.push(
        `<rect x="${x}" y="${y}" width="${Math.round(size * (1 + next() * 2))}" height="${size}" rx="${Math.round(size / 4)}" fill="${fill}"${stroke}/>`,
      );
    else if (kind === 2) {
      // A letter-like stroke: a curved path, as wordmarks are mostly curves.
      const w = size * (0.6 + next());
      shapes.push(
        `<path d="M${x},${y + size} C${x + w * 0.2},${y - size * 0.3} ${x + w * 0.8},${y + size * 1.3} ${x + w},${y}" fill="none" stroke="${tone === "opaque" ? "#ffffff" : ink()}" stroke-width="${Math.max(2, Math.round(size / 6))}" stroke-linecap="round"/>`,
      );
    } else {
      const points = Array.from(
        { length: 3 + Math.floor(next() * 4) },
        () => `${Math.round(x + next() * size * 1.5)},${Math.round(y + next() * size)}`,
      );
      shapes.push(`<polygon points="${points.join(" ")}" fill="${fill}"${stroke}/>`);
    }
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${defs}${shapes.join("")}</svg>`;
  return { svg, width };
}

/** Builds (or reuses) the corpus under `root`. */
export async function buildCorpus(root: string, kind: CorpusKind, logos: number): Promise<Corpus> {
  const dir = join(root, `${kind}-${logos}`);
  const manifest = join(dir, "manifest.jsonl");
  const done = join(dir, "complete.json");
  if (existsSync(done)) return JSON.parse(readFileSync(done, "utf8")) as Corpus;

  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "img"), { recursive: true });
  const rows: string[] = [];
  let bytes = 0;
  for (let index = 0; index < logos; index++) {
    const { svg } = drawing(index);
    const file = `img/${index}.${kind}`;
    const body = kind === "svg" ? Buffer.from(svg) : await sharp(Buffer.from(svg)).png({ compressionLevel: 9 }).toBuffer();
    writeFileSync(join(dir, file), body);
    bytes += body.byteLength;
    const name = `Bench Company ${index}`;
    rows.push(
      JSON.stringify({
        name,
        domains: [`logo-bench-${index}.com`],
        variant: index % 3 === 0 ? "full" : "icon",
        image: file,
        source_set: "bench",
        licence: "CC0-1.0",
      }),
    );
  }
  writeFileSync(manifest, `${rows.join("\n")}\n`);
  const corpus: Corpus = { kind, dir, manifest, logos, meanBytes: Math.round(bytes / logos) };
  writeFileSync(done, JSON.stringify(corpus));
  return corpus;
}
