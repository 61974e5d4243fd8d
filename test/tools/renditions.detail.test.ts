import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { type Page, type Pixels, renditionPixels } from "../../src/images/renditions";
import { prepareLogo } from "../../tools/importer/prepare";
import { buildSeedCatalogue, loadIconSets, readBrands, type SeedCompany, type SeedLogo } from "../../tools/seed/catalogue";
import { innerDetailLost, losesDetail } from "./innerDetail";

/**
 * Inner detail of every mark in the seed, on both themes: which renditions make two inks of a
 * mark one colour where the master drew them apart (./innerDetail.ts). Every seed logo is
 * rasterised to fit SIZE × SIZE, large enough for a glyph on a tile to be drawn, small enough
 * for the whole seed (5,870 logos) to be judged in under a minute; the renditions are the importer's own
 * pure function on those pixels. Notion is also judged through the importer at full size.
 */
const SIZE = 160;
const THEMES: Page[] = ["light", "dark"];

/**
 * Marks whose ink sits on a tile of their own, or on a badge whose colour a theme flips, named
 * so that a failure says which. The first eight lost their inner detail on dark pages before
 * ink was judged against what it sits on; the others came close (fewer merged pairs than the bar).
 */
const TILE_MARKS = [
  "Notion", // a black N and outline on a white tile
  "Bun", // a light bun with a dark outline, and a face
  "Kysely",
  "Wrapped Bitcoin", // white rings on a black disc, black details in them
  "Hedera",
  "Tether Gold",
  "Arbitrum",
  "DeRace",
  "Go", // the gopher: a light body outlined in dark
  "Puppeteer",
  "Jenkins",
  "Travis CI",
  "PocketBase",
  "Oh My Zsh",
];

/**
 * Marks that still lose detail, none of them for a tile: ink the page reaches is moved to 3:1
 * with the page and comes close to an ink beside it, which it is kept apart from only as far as
 * 3:1 with the page allows (the dark facets of Ethereum's crystal lightened towards its grey
 * ones, Qdrant's pale face darkened towards its navy side). Listed by brand and file so that
 * the list only shrinks: a mark that stops losing detail fails the sweep until it is struck
 * off, and one that starts to fails it too.
 */
const KNOWN: Record<Page, string[]> = {
  light: [
    "Babel iconify-logos.babel.svg",
    "Coveralls iconify-logos.coveralls.svg",
    "FFmpeg iconify-logos.ffmpeg-icon.svg",
    "Qdrant iconify-logos.qdrant-icon.svg",
    "TypeDoc vscode-icons.file-type-typedoc.svg",
  ],
  dark: [
    "Aventus web3icons.avt.svg",
    "Ethereum iconify-logos.ethereum.svg",
    "Kleros web3icons.pnk.svg",
    "Qdrant iconify-logos.qdrant-icon.svg",
  ],
};

let companies: SeedCompany[];
const measured = new Map<string, { company: string; lost: Record<Page, boolean>; detail: Record<Page, string> }>();

async function rasterise(logo: SeedLogo): Promise<Pixels> {
  const svg = new TextEncoder().encode(logo.svg);
  const { width = SIZE, height = SIZE } = await sharp(svg).metadata();
  const density = (72 * SIZE) / Math.max(width, height);
  const { data, info } = await sharp(svg, { density }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 4, data: new Uint8Array(data) };
}

async function measure(company: SeedCompany, logo: SeedLogo) {
  const renditions = renditionPixels(await rasterise(logo));
  const lost = { light: false, dark: false };
  const detail = { light: "served as it is", dark: "served as it is" };
  for (const theme of THEMES) {
    const rendition = renditions[theme];
    if (!rendition) continue;
    const result = innerDetailLost(renditions.master, rendition);
    lost[theme] = losesDetail(result);
    detail[theme] = `${result.lost} of ${result.pairs} pairs merged`;
  }
  measured.set(logo.file, { company: company.name, lost, detail });
}

beforeAll(async () => {
  companies = buildSeedCatalogue(readBrands(), loadIconSets());
  const logos = companies.flatMap((company) => company.logos.map((logo) => [company, logo] as const));
  // Two at a time: one logo's analysis runs while sharp rasterises the next.
  let next = 0;
  const worker = async () => {
    while (next < logos.length) {
      const [company, logo] = logos[next++]!;
      await measure(company, logo);
    }
  };
  await Promise.all([worker(), worker()]);
}, 600_000);

describe("inner detail of the seed's marks on both themes", () => {
  it("judges every mark of the seed", () => {
    const logos = companies.reduce((n, company) => n + company.logos.length, 0);
    expect(measured.size).toBe(logos);
    expect(logos).toBeGreaterThan(5_000);
  });

  it.each(TILE_MARKS)("%s keeps its inner detail on light and dark pages", (name) => {
    const company = companies.find((c) => c.name === name);
    expect(company, name).toBeDefined();
    for (const logo of company!.logos) {
      const { lost, detail } = measured.get(logo.file)!;
      expect(lost, `${logo.file}: light ${detail.light}; dark ${detail.dark}`).toEqual({ light: false, dark: false });
    }
  });

  it.each(THEMES)("no mark loses its inner detail on theme=%s beyond the known few", (theme) => {
    const losing = [...measured].filter(([, m]) => m.lost[theme]).map(([file, m]) => `${m.company} ${file}`);
    expect(losing.sort(), losing.map((l) => `${l}: ${measured.get(l.split(" ").at(-1)!)!.detail[theme]}`).join("\n")).toEqual(
      [...KNOWN[theme]].sort(),
    );
  });
});

describe("Notion through the importer", () => {
  it("keeps its black N on its own white tile on theme=dark, at the master's full size", async () => {
    const notion = buildSeedCatalogue(
      readBrands().filter((brand) => brand.name === "Notion"),
      loadIconSets(),
    )[0]!;
    const icon = notion.logos.find((logo) => logo.variant === "icon")!;
    const prepared = await prepareLogo(new TextEncoder().encode(icon.svg));
    if (!prepared.ok) throw new Error(prepared.error);
    const { files } = prepared.logo;
    const pixels = async (png: Uint8Array): Promise<Pixels> => {
      const { data, info } = await sharp(png).toColourspace("srgb").ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      return { width: info.width, height: info.height, channels: 4, data: new Uint8Array(data) };
    };
    const master = await pixels(files.master!);
    expect(master.width).toBeGreaterThanOrEqual(1_000);
    // The tile reads on a dark page as it is: a dark rendition, if any, keeps every inner edge.
    const dark = files.dark ? await pixels(files.dark) : master;
    const detail = innerDetailLost(master, dark);
    expect(detail.pairs).toBeGreaterThan(10_000);
    expect(detail.lost).toBe(0);
  });
});
