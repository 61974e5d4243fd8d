import { describe, expect, it } from "vitest";
import { normaliseDomain } from "../../src/lib/domain";
import { buildSeedCatalogue, loadIconSets, readBrands } from "../../src/cli/seed/catalogue";

const brands = readBrands();
const sets = loadIconSets();
const catalogue = buildSeedCatalogue(brands, sets);

describe("the curated brand mapping", () => {
  it("names every domain in normalised form, each for one brand only", () => {
    const owners = new Map<string, string>();
    for (const brand of brands) {
      for (const domain of brand.domains) {
        expect(normaliseDomain(domain), `${brand.file}:${brand.line} ${domain}`).toEqual({ ok: true, domain });
        expect(owners.get(domain), `${domain} is claimed twice`).toBeUndefined();
        owners.set(domain, brand.name);
      }
    }
  });

  it("refers only to icons that exist, each used by one brand", () => {
    const used = new Set<string>();
    for (const brand of brands) {
      for (const slug of brand.simpleIcons ?? []) {
        expect(sets.simpleIcons.has(slug), `${brand.file}:${brand.line} simple-icons ${slug}`).toBe(true);
        expect(used.has(`si:${slug}`), `simple-icons ${slug} used twice`).toBe(false);
        used.add(`si:${slug}`);
      }
      for (const name of brand.iconify ?? []) {
        const known = name in sets.iconify.icons || name in (sets.iconify.aliases ?? {});
        expect(known, `${brand.file}:${brand.line} iconify ${name}`).toBe(true);
        expect(used.has(`ic:${name}`), `iconify ${name} used twice`).toBe(false);
        used.add(`ic:${name}`);
      }
    }
  });

  it("gives every ticker an exchange, and no ticker to two brands", () => {
    const seen = new Set<string>();
    for (const brand of brands.filter((b) => b.ticker)) {
      expect(brand.exchange, `${brand.name} has a ticker without exchange`).toBeTruthy();
      const key = `${brand.ticker}@${brand.exchange}`;
      expect(seen.has(key), `${key} twice`).toBe(false);
      seen.add(key);
    }
  });
});

describe("the seed catalogue", () => {
  it("covers at least 1,500 companies with domains and 300 with tickers", () => {
    expect(catalogue.length).toBeGreaterThanOrEqual(1500);
    expect(catalogue.filter((c) => c.ticker).length).toBeGreaterThanOrEqual(300);
  });

  it("has at most one logo per company, variant and source set", () => {
    for (const company of catalogue) {
      const keys = company.logos.map((l) => `${l.variant}/${l.sourceSet}`);
      expect(new Set(keys).size, company.name).toBe(keys.length);
    }
  });

  it("paints simple-icons in the brand colour and serves no icon under a restrictive licence", () => {
    const github = catalogue.find((c) => c.domains.includes("github.com"))!;
    const icon = github.logos.find((l) => l.sourceSet === "simple-icons")!;
    expect(icon.svg).toContain(`fill="#${sets.simpleIcons.get("github")!.hex}"`);
    expect(github.brandColor).toBe(`#${sets.simpleIcons.get("github")!.hex.toLowerCase()}`);
    for (const company of catalogue) {
      for (const logo of company.logos) expect(logo.licence).not.toMatch(/(^|-)(NC|ND)(-|$)|^custom$/);
    }
  });

  it("keeps wordmarks and icons of the iconify set apart", () => {
    const google = catalogue.find((c) => c.domains.includes("google.com"));
    expect(google?.logos.map((l) => `${l.sourceSet}:${l.variant}`).sort()).toEqual(
      expect.arrayContaining(["iconify-logos:full", "iconify-logos:icon"]),
    );
  });
});
