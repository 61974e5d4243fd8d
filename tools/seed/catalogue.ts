import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { LogoVariant } from "../../schema";
import { nameKey } from "../../src/catalogue/names";
import { isValidIsin } from "../../src/lib/isin";
import { type SourceSetId, sourceSets } from "../../src/licences/sources";
import { type IconSets, loadIconSets, type SetLogo } from "./sets";

export { loadIconSets, type IconSets } from "./sets";

/**
 * The bundled seed catalogue: brand icons from permissively licensed sets on npm (see
 * src/licences/sources.ts), joined to real domains and tickers by the curated mapping in
 * ./brands/*.jsonl (one brand a line). No set knows domains or tickers; a brand is seeded
 * only when the mapping names one.
 *
 * A company gets at most one icon and one wordmark: of the icons the mapping names, the
 * full-colour drawing before a monochrome one, then the set listed first in `sourceSets`
 * (the set that draws the current logo from the brand's own artwork before redrawn glyphs),
 * unless the brand's `prefer` names another set and says why.
 */
const setIds = sourceSets.map((s) => s.id) as [SourceSetId, ...SourceSetId[]];
const names = z.array(z.string().min(1)).optional();

export const brandSchema = z
  .object({
    name: z.string().min(1),
    /** Official hosts, primary first: the brand's site, then its country, short-link and app hosts. */
    domains: z.array(z.string().min(1)).min(1),
    ticker: z.string().min(1).optional(),
    exchange: z.string().min(1).optional(),
    /** ISINs of the company's listed shares (ISO 6166, check digit included): `/isin/{isin}` finds it. */
    isins: z
      .array(z.string().refine(isValidIsin, "an ISIN: two capital letters of a country, nine characters, a valid check digit"))
      .min(1)
      .optional(),
    /** Symbols of the brand's own coins or tokens, upper case: `/crypto/{symbol}` finds it. */
    crypto: z
      .array(z.string().regex(/^[A-Z0-9]{1,12}$/, "a crypto symbol: 1 to 12 capital letters or digits"))
      .min(1)
      .optional(),
    aliases: z.array(z.string().min(1)).optional(),
    /** Brand colour (`#rrggbb`) for brands simple-icons does not colour; paints monochrome icons. */
    color: z
      .string()
      .regex(/^#[0-9a-f]{6}$/)
      .optional(),
    /** Overrides the default choice of set for a variant, with the reason. */
    prefer: z
      .object({ icon: z.enum(setIds).optional(), full: z.enum(setIds).optional(), because: z.string().min(10) })
      .strict()
      .optional(),
    ftLogoImages: names,
    bbcPsammead: names,
    simpleIcons: names,
    iconify: names,
    lobeIcons: names,
    devicon: names,
    vscodeIcons: names,
    web3icons: names,
    cryptocurrencyIcons: names,
    coreuiBrands: names,
    fa6Brands: names,
    boxicons: names,
    streamlineLogos: names,
    fileIcons: names,
    superTinyIcons: names,
    tablerBrands: names,
    cssGg: names,
    springerNature: names,
    academicons: names,
    theSvg: names,
    ooui: names,
  })
  .strict();
export type Brand = z.infer<typeof brandSchema>;
export type IconField = Exclude<
  keyof Brand,
  "name" | "domains" | "ticker" | "exchange" | "isins" | "crypto" | "aliases" | "color" | "prefer"
>;

export const brandsDir = join(dirname(fileURLToPath(import.meta.url)), "../../data/seed/brands");

export function readBrands(dir = brandsDir): Array<Brand & { file: string; line: number }> {
  const brands: Array<Brand & { file: string; line: number }> = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    readFileSync(join(dir, file), "utf8")
      .split("\n")
      .forEach((text, index) => {
        if (text.trim() === "") return;
        const parsed = brandSchema.safeParse(JSON.parse(text));
        if (!parsed.success) throw new Error(`${file}:${index + 1}: ${z.prettifyError(parsed.error)}`);
        brands.push({ ...parsed.data, file, line: index + 1 });
      });
  }
  return brands;
}

export interface SeedLogo {
  variant: LogoVariant;
  sourceSet: SourceSetId;
  licence: string;
  /** File name in the seed's image folder (flat: `<set>.<icon>.svg`). */
  file: string;
  svg: string;
}

export interface SeedCompany {
  name: string;
  domains: string[];
  ticker?: string | undefined;
  exchange?: string | undefined;
  isins: string[];
  crypto: string[];
  aliases: string[];
  brandColor?: string | undefined;
  prominence: number;
  logos: SeedLogo[];
}

export function buildSeedCatalogue(brands: Brand[], sets: IconSets = loadIconSets()): SeedCompany[] {
  // Another brand's name, as the lookup by name folds it (nameKey): an icon set's "also known
  // as" never takes it (simple-icons gives Deutsche Telekom "T-Mobile", OpenTofu "Terraform").
  const brandNames = new Set(brands.map((brand) => nameKey(brand.name)));
  return brands.flatMap((brand) => {
    const simple = (brand.simpleIcons ?? []).map((slug) => sets.simpleIcons.get(slug)).find((icon) => icon !== undefined);
    const brandColor = brand.color ?? (simple ? `#${simple.hex.toLowerCase()}` : undefined);
    const offered = sets.all.map((set) => ({
      set: set.source.id as SourceSetId,
      logos: set.logos(brand[set.field as IconField] ?? [], brandColor),
    }));
    const logos = (["icon", "full"] as const).flatMap((variant) => {
      const best = bestLogo(offered, variant, brand.prefer?.[variant]);
      return best ? [best] : [];
    });
    if (logos.length === 0) return [];
    const own = nameKey(brand.name);
    const aka = (simple?.aliases?.aka ?? []).filter((a) => nameKey(a) === own || !brandNames.has(nameKey(a)));
    const aliases = [...new Set([...(brand.aliases ?? []), ...aka])].filter((a) => a !== brand.name);
    return [
      {
        name: brand.name,
        domains: brand.domains,
        ticker: brand.ticker,
        exchange: brand.exchange,
        isins: brand.isins ?? [],
        crypto: brand.crypto ?? [],
        aliases,
        brandColor,
        // Brands drawn by several sets, and listed companies, are the better known ones.
        prominence: offered.filter((o) => o.logos.length > 0).length + (brand.ticker ? 2 : 0),
        logos,
      },
    ];
  });
}

function bestLogo(
  offered: Array<{ set: SourceSetId; logos: SetLogo[] }>,
  variant: LogoVariant,
  preferred?: SourceSetId,
): SeedLogo | undefined {
  // The preferred set, then full colour, then the sets' order, then the set's own order of names.
  const candidates = offered.flatMap(({ set, logos }, order) =>
    logos
      .filter((logo) => logo.variant === variant)
      .map((logo, index) => ({
        set,
        logo,
        rank: (set === preferred ? 0 : 1_000) + (logo.fullColour ? 0 : 100) + order * 10 + Math.min(index, 9),
      })),
  );
  const best = candidates.sort((a, b) => a.rank - b.rank)[0];
  if (!best) return undefined;
  const { set, logo } = best;
  return { variant, sourceSet: set, licence: logo.licence, file: `${set}.${logo.name}.svg`, svg: logo.svg };
}

/** What the seed holds, counted without importing it: companies, logos, per set and licence. */
export function seedSummary(companies: SeedCompany[] = buildSeedCatalogue(readBrands())) {
  const logos = companies.flatMap((c) => c.logos);
  const count = (key: (logo: SeedLogo) => string) => {
    const counts = new Map<string, number>();
    for (const logo of logos) counts.set(key(logo), (counts.get(key(logo)) ?? 0) + 1);
    return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
  };
  return {
    companies: companies.length,
    logos: logos.length,
    domains: companies.reduce((n, c) => n + c.domains.length, 0),
    tickers: companies.filter((c) => c.ticker).length,
    isins: companies.reduce((n, c) => n + c.isins.length, 0),
    cryptoSymbols: companies.reduce((n, c) => n + c.crypto.length, 0),
    perSet: count((l) => l.sourceSet),
    perLicence: count((l) => l.licence),
    perSetAndLicence: count((l) => `${l.sourceSet} ${l.licence}`),
  };
}
