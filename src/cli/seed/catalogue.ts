import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { LogoVariant } from "../../../schema";

/**
 * The bundled seed catalogue: brand icons from two public-domain sets on npm, joined to
 * real domains and tickers by the curated mapping in ./brands/*.jsonl (one brand a line).
 *
 *   simple-icons          single-path SVGs without colour: rendered in the brand's `hex`
 *   @iconify-json/logos   full-colour SVG logos; names ending in `-icon` are the icon-only form
 *
 * Neither set knows domains or tickers; a brand is seeded only when the mapping names one.
 */
export const brandSchema = z.object({
  name: z.string().min(1),
  domains: z.array(z.string().min(1)).min(1),
  ticker: z.string().min(1).optional(),
  exchange: z.string().min(1).optional(),
  aliases: z.array(z.string().min(1)).optional(),
  simpleIcons: z.array(z.string().min(1)).optional(),
  iconify: z.array(z.string().min(1)).optional(),
});
export type Brand = z.infer<typeof brandSchema>;

export const brandsDir = join(dirname(fileURLToPath(import.meta.url)), "brands");

export function readBrands(dir = brandsDir): Array<Brand & { file: string; line: number }> {
  const brands: Array<Brand & { file: string; line: number }> = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    readFileSync(join(dir, file), "utf8")
      .split("\n")
      .forEach((text, index) => {
        if (text.trim() === "") return;
        const brand = brandSchema.parse(JSON.parse(text));
        brands.push({ ...brand, file, line: index + 1 });
      });
  }
  return brands;
}

interface SimpleIcon {
  title: string;
  slug: string;
  hex: string;
  aliases?: { aka?: string[] };
  license?: { type: string };
}

interface IconifyIcon {
  body: string;
  width?: number;
  height?: number;
  left?: number;
  top?: number;
}

interface IconifySet {
  icons: Record<string, IconifyIcon>;
  aliases?: Record<string, { parent: string }>;
  width?: number;
  height?: number;
}

export interface IconSets {
  simpleIcons: Map<string, SimpleIcon & { svg: string }>;
  iconify: IconifySet;
}

export function loadIconSets(): IconSets {
  // The simple-icons data file carries the aliases; the package's exports carry the SVGs.
  const simpleIconsDir = dirname(fileURLToPath(import.meta.resolve("simple-icons")));
  const data = JSON.parse(readFileSync(join(simpleIconsDir, "data", "simple-icons.json"), "utf8")) as SimpleIcon[];
  const simpleIcons = new Map<string, SimpleIcon & { svg: string }>();
  for (const icon of data) {
    const svgPath = join(simpleIconsDir, "icons", `${icon.slug}.svg`);
    simpleIcons.set(icon.slug, { ...icon, svg: readFileSync(svgPath, "utf8") });
  }
  const iconifyPath = fileURLToPath(import.meta.resolve("@iconify-json/logos/icons.json"));
  const iconify = JSON.parse(readFileSync(iconifyPath, "utf8")) as IconifySet;
  return { simpleIcons, iconify };
}

/**
 * Licences under which an icon may not be served by a commercial logo service (non-commercial,
 * no-derivatives, or terms of its own); simple-icons records these per icon.
 */
const RESTRICTIVE_LICENCE = /(^|-)(NC|ND)(-|$)|^custom$/i;

export interface SeedLogo {
  variant: LogoVariant;
  sourceSet: "simple-icons" | "iconify-logos";
  licence: string;
  /** File name under the seed's image folder. */
  file: string;
  svg: string;
}

export interface SeedCompany {
  name: string;
  domains: string[];
  ticker?: string | undefined;
  exchange?: string | undefined;
  aliases: string[];
  brandColor?: string | undefined;
  prominence: number;
  logos: SeedLogo[];
}

export function buildSeedCatalogue(brands: Brand[], sets: IconSets): SeedCompany[] {
  return brands.flatMap((brand) => {
    const logos = [...iconifyLogos(brand, sets.iconify), ...simpleIconLogos(brand, sets.simpleIcons)];
    if (logos.length === 0) return [];
    const simple = (brand.simpleIcons ?? []).map((slug) => sets.simpleIcons.get(slug)).find((icon) => icon !== undefined);
    const aliases = [...new Set([...(brand.aliases ?? []), ...(simple?.aliases?.aka ?? [])])].filter((a) => a !== brand.name);
    return [
      {
        name: brand.name,
        domains: brand.domains,
        ticker: brand.ticker,
        exchange: brand.exchange,
        aliases,
        brandColor: simple ? `#${simple.hex.toLowerCase()}` : undefined,
        // Brands in both sets, and listed companies, are the better known ones.
        prominence: new Set(logos.map((l) => l.sourceSet)).size + (brand.ticker ? 2 : 0),
        logos,
      },
    ];
  });
}

function simpleIconLogos(brand: Brand, icons: IconSets["simpleIcons"]): SeedLogo[] {
  for (const slug of brand.simpleIcons ?? []) {
    const icon = icons.get(slug);
    if (!icon) continue;
    const licence = icon.license?.type ?? "CC0-1.0";
    if (RESTRICTIVE_LICENCE.test(licence)) continue;
    // The SVG is one path without colour: paint it in the brand colour.
    const svg = icon.svg.replace("<svg ", `<svg fill="#${icon.hex}" `);
    return [{ variant: "icon", sourceSet: "simple-icons", licence, file: `simple-icons/${slug}.svg`, svg }];
  }
  return [];
}

function iconifyLogos(brand: Brand, set: IconifySet): SeedLogo[] {
  const names = (brand.iconify ?? []).filter((name) => resolveIconify(set, name) !== undefined);
  // `-dark`/`-light` forms are colourings of a logo listed beside them; take the plain one.
  const plain = names.filter((name) => !/-(dark|light)$/.test(name));
  const candidates = plain.length > 0 ? plain : names;
  const byVariant = new Map<LogoVariant, string>();
  for (const name of [...candidates].sort((a, b) => a.length - b.length)) {
    const icon = resolveIconify(set, name)!;
    const width = icon.width ?? set.width ?? 256;
    const height = icon.height ?? set.height ?? 256;
    const hasIconSibling = candidates.includes(`${name}-icon`);
    const variant: LogoVariant =
      name.endsWith("-icon") ? "icon" : hasIconSibling || width / height >= 1.5 ? "full" : "icon";
    if (!byVariant.has(variant)) byVariant.set(variant, name);
  }
  return [...byVariant].map(([variant, name]) => {
    const icon = resolveIconify(set, name)!;
    const width = icon.width ?? set.width ?? 256;
    const height = icon.height ?? set.height ?? 256;
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ` +
      `width="${width}" height="${height}" viewBox="${icon.left ?? 0} ${icon.top ?? 0} ${width} ${height}">${icon.body}</svg>`;
    return { variant, sourceSet: "iconify-logos", licence: "CC0-1.0", file: `iconify-logos/${name}.svg`, svg };
  });
}

function resolveIconify(set: IconifySet, name: string): IconifyIcon | undefined {
  return set.icons[name] ?? (set.aliases?.[name] ? set.icons[set.aliases[name].parent] : undefined);
}
