import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { prepareLogo } from "../../tools/importer/prepare";
import { buildSeedCatalogue, loadIconSets, readBrands, type SeedCompany } from "../../tools/seed/catalogue";
import { contrastOf, hueDistance, type Rgb, toOklch } from "../../src/images/colour";
import { type Look, lookRendition, type Rendition } from "../../src/images/objectKeys";
import { dominantInk, greyOf, PAGES, type Pixels, renditionPixels } from "../../src/images/renditions";

/**
 * Renditions of real seed logos, judged by their pixels: the brands whose look on a white and a
 * dark page the catalogue is most often asked for. Logos named by the contrast rule go through
 * the importer's own image step (1,200 px masters); the sweep over forty brands decides on
 * 300 px rasters with the same pure function, to keep the suite quick.
 */
const FORTY = [
  "Google",
  "Apple",
  "Microsoft",
  "Meta",
  "Facebook",
  "YouTube",
  "Netflix",
  "Spotify",
  "Starbucks",
  "Visa",
  "Sony",
  "Toyota",
  "Tesla",
  "GitHub",
  "Vercel",
  "Coca-Cola",
  "Nike",
  "Adobe",
  "IBM",
  "Intel",
  "Samsung",
  "PayPal",
  "Stripe",
  "Slack",
  "Airbnb",
  "Uber",
  "X",
  "LinkedIn",
  "Instagram",
  "WhatsApp",
  "McDonald's",
  "Shopify",
  "Salesforce",
  "Oracle",
  "NVIDIA",
  "BMW",
  "Zoom",
  "Dropbox",
  "Reddit",
  "TikTok",
];

let catalogue: Map<string, SeedCompany>;
beforeAll(() => {
  const brands = readBrands().filter((brand) => FORTY.includes(brand.name));
  catalogue = new Map(buildSeedCatalogue(brands, loadIconSets()).map((company) => [company.name, company]));
});

const preparedSvgs = new Map<string, ReturnType<typeof prepareLogo>>();
const prepare = (svg: string) => {
  if (!preparedSvgs.has(svg)) preparedSvgs.set(svg, prepareLogo(new TextEncoder().encode(svg)));
  return preparedSvgs.get(svg)!;
};

/** Each logo of a brand through the importer, with the dominant ink of what a look serves. */
async function served(name: string, look: Look) {
  const company = catalogue.get(name);
  if (!company) throw new Error(`${name} is not in the seed catalogue`);
  return Promise.all(
    company.logos.map(async (logo) => {
      const prepared = await prepare(logo.svg);
      if (!prepared.ok) throw new Error(prepared.error);
      const { files, renditions } = prepared.logo;
      const pixels = async (png: Uint8Array): Promise<Pixels> => {
        const { data, info } = await sharp(png).toColourspace("srgb").ensureAlpha().raw().toBuffer({ resolveWithObject: true });
        return { width: info.width, height: info.height, channels: 4, data: new Uint8Array(data) };
      };
      const rendition = lookRendition(renditions, look);
      // A greyscale rendition is made on first request from its colour one (src/images/greyOnDemand.ts).
      const colour = { grey: "master", lightGrey: "light", darkGrey: "dark" }[rendition as string] as Rendition | undefined;
      const servedPixels = colour && !files[rendition] ? greyOf(await pixels(files[colour]!)) : await pixels(files[rendition]!);
      return { file: logo.file, rendition, master: dominantInk(await pixels(files.master))!, served: dominantInk(servedPixels)! };
    }),
  );
}

const dark = { theme: "dark", greyscale: false } as const;
const hue = (rgb: Rgb) => toOklch(rgb).h;

describe("theme=dark on real seed logos", () => {
  it.each(["YouTube", "Spotify", "Starbucks"])("%s keeps its hue and is not inverted", async (name) => {
    for (const logo of await served(name, dark)) {
      expect(hueDistance(hue(logo.served), hue(logo.master)), logo.file).toBeLessThan(20);
      // Inverted, the ink would have moved to the opposite hue and lightness.
      expect(
        hueDistance(hue(logo.served), hue([255 - logo.master[0], 255 - logo.master[1], 255 - logo.master[2]])),
        logo.file,
      ).toBeGreaterThan(90);
      expect(contrastOf(logo.served, PAGES.dark), logo.file).toBeGreaterThanOrEqual(3);
    }
  });

  it("YouTube's red and Spotify's green already read on a dark page and are served unchanged", async () => {
    for (const logo of [...(await served("YouTube", dark)), ...(await served("Spotify", dark))]) {
      expect(logo.served, logo.file).toEqual(logo.master);
    }
  });

  it.each(["Vercel", "GitHub"])("%s's black mark turns light", async (name) => {
    for (const logo of await served(name, dark)) {
      expect(toOklch(logo.master).l, logo.file).toBeLessThan(0.3);
      expect(toOklch(logo.served).l, logo.file).toBeGreaterThan(0.7);
    }
  });

  it("Visa's navy turns light and stays blue", async () => {
    for (const logo of await served("Visa", dark)) {
      expect(toOklch(logo.served).l - toOklch(logo.master).l, logo.file).toBeGreaterThan(0.2);
      expect(hueDistance(hue(logo.served), hue(logo.master)), logo.file).toBeLessThan(20);
      expect(hue(logo.served), logo.file).toBeGreaterThan(240);
      expect(hue(logo.served), logo.file).toBeLessThan(290);
      expect(contrastOf(logo.served, PAGES.dark), logo.file).toBeGreaterThanOrEqual(3);
    }
  });

  it("every mark of forty well-known brands has its dominant ink at 3:1 or more on #121212", async () => {
    let marks = 0;
    for (const name of FORTY) {
      const company = catalogue.get(name)!;
      expect(company, name).toBeDefined();
      for (const logo of company.logos) {
        const { data, info } = await sharp(new TextEncoder().encode(logo.svg), { density: 216 })
          .resize({ width: 300 })
          .ensureAlpha()
          .raw()
          .toBuffer({ resolveWithObject: true });
        const pixels = renditionPixels({ width: info.width, height: info.height, channels: 4, data: new Uint8Array(data) });
        const ink = dominantInk(pixels.dark ?? pixels.master)!;
        expect(contrastOf(ink, PAGES.dark), `${name} ${logo.file}: ${ink}`).toBeGreaterThanOrEqual(3);
        marks++;
      }
    }
    // Every brand has at least one mark in the seed (its icon, and its wordmark where a set draws one).
    expect(marks).toBeGreaterThanOrEqual(FORTY.length);
  });
});

describe("Sony's white mark on a white page", () => {
  it.each([
    ["no theme", { greyscale: false }],
    ["theme=light", { theme: "light", greyscale: false }],
    ["greyscale", { greyscale: true }],
  ] as const)("has 3:1 or more on white with %s", async (_, look) => {
    for (const logo of await served("Sony", look)) {
      expect(contrastOf(logo.master, PAGES.light)).toBeLessThan(1.1);
      expect(contrastOf(logo.served, PAGES.light), logo.file).toBeGreaterThanOrEqual(3);
    }
  });
});
