import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseCryptoSymbol } from "../../src/catalogue/identifiers";
import { nameKey } from "../../src/catalogue/names";
import { normaliseDomain } from "../../src/lib/domain";
import { isValidIsin } from "../../src/lib/isin";
import { RESTRICTIVE_LICENCE, sourceSets } from "../../src/licences/sources";
import { type IconField, buildSeedCatalogue, loadIconSets, readBrands, seedSummary } from "../../tools/seed/catalogue";
import { EXAMPLE_DOMAIN, themesWhenLocal } from "../../tools/seed/seed";
import { WALL_DOMAINS } from "../../src/web/wall";

const brands = readBrands();
const sets = loadIconSets();
const catalogue = buildSeedCatalogue(brands, sets);
const byDomain = new Map(catalogue.flatMap((company) => company.domains.map((domain) => [domain, company] as const)));

const MAX_HOSTS = 90;

// Where each market's tickers are listed; a ticker names its exchange by one of these codes.
const EXCHANGES = new Set([
  "NASDAQ",
  "NYSE",
  "LSE",
  "XETRA",
  "EURONEXT",
  "SIX",
  "TSE",
  "TSX",
  "HKEX",
  "SSE",
  "SZSE",
  "KRX",
  "TWSE",
  "NSE",
  "ASX",
  "OMX",
  "BME",
  "BIT",
  "WSE",
  "MOEX",
  "BIST",
  "IDX",
  "BMV",
  "SGX",
  "EGX",
  "B3",
  "OSE",
  "JSE",
  "TADAWUL",
  "SET",
]);

describe("the curated brand mapping", () => {
  it("names every domain in normalised form, each for one brand only", () => {
    const owners = new Map<string, string>();
    for (const brand of brands) {
      for (const domain of brand.domains) {
        expect(normaliseDomain(domain), `${brand.file}:${brand.line} ${domain}`).toEqual({ ok: true, domain });
        expect(owners.get(domain), `${domain} is claimed by ${owners.get(domain)} and ${brand.name}`).toBeUndefined();
        owners.set(domain, brand.name);
      }
    }
  });

  it("lists no more hosts for a brand than one D1 statement can bind", () => {
    // The importer looks a row's hosts up in one query; D1 binds at most 100 parameters.
    for (const brand of brands) expect(brand.domains.length, brand.name).toBeLessThanOrEqual(MAX_HOSTS);
  });

  it("refers only to icons that exist, each used by one brand", () => {
    const used = new Map<string, string>();
    for (const brand of brands) {
      for (const set of sets.all) {
        for (const name of brand[set.field as IconField] ?? []) {
          expect(set.has(name), `${brand.file}:${brand.line} ${set.source.id} ${name}`).toBe(true);
          const key = `${set.source.id}:${name}`;
          expect(used.get(key), `${key} used by ${used.get(key)} and ${brand.name}`).toBeUndefined();
          used.set(key, brand.name);
        }
      }
    }
  });

  it("gives every ticker a known exchange, and no (ticker, exchange) to two brands", () => {
    const seen = new Map<string, string>();
    for (const brand of brands.filter((b) => b.ticker || b.exchange)) {
      expect(brand.ticker && brand.exchange, `${brand.name}: ticker and exchange come together`).toBeTruthy();
      expect(EXCHANGES.has(brand.exchange!), `${brand.name}: exchange ${brand.exchange}`).toBe(true);
      const key = `${brand.ticker}@${brand.exchange}`;
      expect(seen.get(key), `${key} for ${seen.get(key)} and ${brand.name}`).toBeUndefined();
      seen.set(key, brand.name);
    }
  });

  it("gives ISINs only to listed brands, each with a valid check digit and claimed by one brand", () => {
    // The listed companies the seed holds, 300 and more of them, the largest by market value first.
    expect(brands.filter((b) => b.isins).length).toBeGreaterThanOrEqual(300);
    const owners = new Map<string, string>();
    for (const brand of brands.filter((b) => b.isins)) {
      expect(brand.ticker, `${brand.file}:${brand.line} ${brand.name} has ISINs but no ticker`).toBeTruthy();
      for (const isin of brand.isins!) {
        expect(isValidIsin(isin), `${brand.file}:${brand.line} ${isin}`).toBe(true);
        expect(owners.get(isin), `${isin} is claimed by ${owners.get(isin)} and ${brand.name}`).toBeUndefined();
        owners.set(isin, brand.name);
      }
    }
  });

  it("gives each crypto symbol to one brand, one drawn by a crypto icon set, in the form /crypto/{symbol} finds", () => {
    const owners = new Map<string, string>();
    const withSymbols = brands.filter((b) => b.crypto);
    // The coins and tokens the seed draws: hundreds, Bitcoin's and Ether's among them.
    expect(withSymbols.length).toBeGreaterThanOrEqual(800);
    expect(brands.find((b) => b.domains[0] === "bitcoin.org")?.crypto).toEqual(["BTC"]);
    expect(brands.find((b) => b.domains[0] === "ethereum.org")?.crypto).toEqual(["ETH"]);
    for (const brand of withSymbols) {
      expect(
        brand.web3icons ?? brand.cryptocurrencyIcons,
        `${brand.file}:${brand.line} ${brand.name} has symbols but no crypto icon`,
      ).toBeTruthy();
      for (const symbol of brand.crypto!) {
        expect(parseCryptoSymbol(symbol), `${brand.file}:${brand.line} ${symbol}`).toEqual({ ok: true, value: symbol });
        expect(owners.get(symbol), `${symbol} is claimed by ${owners.get(symbol)} and ${brand.name}`).toBeUndefined();
        owners.set(symbol, brand.name);
      }
    }
  });

  it("writes each ticker as lookups and search find it: upper case, a share class after a dash or a dot", () => {
    // The symbols src/lookup/request.ts (`/ticker/{t}`) and search accept; no spaces.
    for (const brand of brands.filter((b) => b.ticker)) expect(brand.ticker, `${brand.file}:${brand.line}`).toMatch(/^[A-Z0-9.&-]{1,20}$/);
  });

  it("lets no icon set's alias take another brand's name, as the lookup by name folds it", () => {
    const names = new Set(catalogue.map((c) => nameKey(c.name)));
    for (const brand of brands) {
      const company = byDomain.get(brand.domains[0]!);
      for (const alias of (company?.aliases ?? []).filter((a) => !brand.aliases?.includes(a))) {
        expect(
          nameKey(alias) === nameKey(brand.name) || !names.has(nameKey(alias)),
          `${brand.file}:${brand.line} ${brand.name}: ${alias}`,
        ).toBe(true);
      }
    }
  });

  it("overrides the choice of set only for a set the brand uses, and says why", () => {
    for (const brand of brands.filter((b) => b.prefer)) {
      for (const variant of ["icon", "full"] as const) {
        const preferred = brand.prefer![variant];
        if (!preferred) continue;
        const company = catalogue.find((c) => c.domains[0] === brand.domains[0])!;
        expect(company.logos.find((l) => l.variant === variant)?.sourceSet, `${brand.name} ${variant}`).toBe(preferred);
      }
    }
  });

  it("records for each set the licence its package declares, and none that is restrictive", () => {
    const declared = (pkg: string) =>
      (JSON.parse(readFileSync(join("node_modules", pkg, "package.json"), "utf8")) as { license: string }).license;
    const iconify = (pkg: string) => {
      const info = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve(`${pkg}/info.json`)), "utf8")) as {
        license: { spdx: string };
      };
      return info.license.spdx;
    };
    // The Financial Times publishes its logo images under the MIT licence its README states.
    const ftReadme = readFileSync(join("node_modules", "@financial-times/logo-images", "README.md"), "utf8");
    const packages: Record<string, string> = {
      "ft-logo-images": /published by the Financial Times under the \[MIT licence\]/.test(ftReadme) ? "MIT" : "unknown",
      "bbc-psammead": declared("@bbc/psammead-assets"),
      "super-tiny-icons": declared("super-tiny-icons"),
      "tabler-brands": iconify("@iconify-json/tabler"),
      "css-gg": iconify("@iconify-json/gg"),
      academicons: iconify("@iconify-json/academicons"),
      "springer-nature": declared("@springernature/brand-context"),
      thesvg: declared("@thesvg/icons"),
      ooui: iconify("@iconify-json/ooui"),
      "simple-icons": declared("simple-icons"),
      "lobe-icons": declared("@lobehub/icons-static-svg"),
      "iconify-logos": iconify("@iconify-json/logos"),
      devicon: iconify("@iconify-json/devicon"),
      "vscode-icons": iconify("@iconify-json/vscode-icons"),
      web3icons: iconify("@iconify-json/token-branded"),
      "cryptocurrency-icons": iconify("@iconify-json/cryptocurrency-color"),
      "coreui-brands": iconify("@iconify-json/cib"),
      "fa6-brands": iconify("@iconify-json/fa6-brands"),
      "boxicons-brands": iconify("@iconify-json/bxl"),
      "streamline-logos": iconify("@iconify-json/streamline-logos"),
      "file-icons": iconify("@iconify-json/file-icons"),
    };
    for (const source of sourceSets) {
      expect(source.licence, source.id).toBe(packages[source.id]);
      expect(source.licence).not.toMatch(RESTRICTIVE_LICENCE);
      // Every licence but CC0 asks for a credit.
      expect(source.attribution === null, source.id).toBe(source.licence === "CC0-1.0");
    }
    for (const logo of catalogue.flatMap((c) => c.logos)) expect(logo.licence).not.toMatch(RESTRICTIVE_LICENCE);
    // theSVG records a licence per drawing ("Fair Use", "Trademark", CC-BY-ND… among them): only CC0 and MIT ones are taken.
    const theSvg = catalogue.flatMap((c) => c.logos).filter((l) => l.sourceSet === "thesvg");
    expect(theSvg.length).toBeGreaterThan(0);
    for (const logo of theSvg) expect(["CC0-1.0", "MIT"], logo.file).toContain(logo.licence);
    const theSvgSet = sets.all.find((s) => s.source.id === "thesvg")!;
    for (const slug of ["espn", "costco", "nfl"]) expect(theSvgSet.has(slug), slug).toBe(false);
  });
});

describe("the seed catalogue", () => {
  it("covers at least 5,000 companies, 360 of them listed", () => {
    expect(catalogue.length).toBeGreaterThanOrEqual(5000);
    expect(catalogue.filter((c) => c.ticker).length).toBeGreaterThanOrEqual(360);
  });

  it("gives a company at most one icon and one wordmark, 1.5 logos a company at most on average", () => {
    for (const company of catalogue) {
      const variants = company.logos.map((l) => l.variant);
      expect(new Set(variants).size, company.name).toBe(variants.length);
    }
    expect(catalogue.flatMap((c) => c.logos).length / catalogue.length).toBeLessThanOrEqual(1.5);
  });

  it("names each image file once, in the flat image folder", () => {
    const files = catalogue.flatMap((c) => c.logos.map((l) => l.file));
    expect(new Set(files).size).toBe(files.length);
    for (const file of files) expect(file).toMatch(/^[a-z0-9-]+\.[a-z0-9_-]+\.svg$/);
  });

  it("prefers a full-colour drawing and paints monochrome ones in the brand colour", () => {
    const google = byDomain.get("google.com")!;
    expect(google.logos.map((l) => `${l.sourceSet}:${l.variant}`).sort()).toEqual(["iconify-logos:full", "iconify-logos:icon"]);
    // GitHub's colour is simple-icons' for it.
    const github = byDomain.get("github.com")!;
    expect(github.brandColor).toBe(`#${sets.simpleIcons.get("github")!.hex.toLowerCase()}`);
    // A simple-icons drawing is a single monochrome path: each is painted in its brand's colour.
    const simple = catalogue.flatMap((c) => c.logos).filter((l) => l.sourceSet === "simple-icons");
    expect(simple.length).toBeGreaterThan(100);
    for (const logo of simple) {
      const slug = /^simple-icons\.(.+)\.svg$/.exec(logo.file)![1]!;
      expect(logo.svg, logo.file).toContain(`fill="#${sets.simpleIcons.get(slug)!.hex}"`);
    }
    for (const logo of catalogue.flatMap((c) => c.logos)) expect(logo.svg).not.toContain("currentColor");
  });

  it("answers the hosts people paste with the brand that owns them", () => {
    const owner = (host: string) => byDomain.get(host)?.name;
    for (const host of ["google.de", "google.co.uk", "google.fr", "google.co.jp", "google.com.br", "g.co", "goo.gl"]) {
      expect(owner(host), host).toBe("Google");
    }
    expect(owner("youtu.be")).toBe("YouTube");
    expect(owner("wa.me")).toBe("WhatsApp");
    expect(owner("t.me")).toBe("Telegram");
    expect(owner("discord.gg")).toBe("Discord");
    expect(owner("redd.it")).toBe("Reddit");
    expect(owner("amzn.to")).toBe("Amazon");
    expect(owner("amazon.de")).toBe("Amazon");
    // Hosts that serve a brand under another name: its CDN, storage, mail and page hosts.
    expect(owner("bp.blogspot.com")).toBe("Blogger");
    expect(owner("amazonaws.com")).toBe("AWS");
    expect(owner("azurefd.net")).toBe("Microsoft Azure");
    expect(owner("office.com")).toBe("Microsoft");
    expect(owner("list-manage.com")).toBe("Mailchimp");
    expect(owner("guardian.co.uk")).toBe("The Guardian");
    expect(owner("bbc.com")).toBe("BBC");
    // A host that serves another product stays that product's company.
    expect(owner("forms.gle")).toBe("Google Forms");
    expect(owner("music.youtube.com")).toBe("YouTube Music");
  });

  it("holds the most visited brands the older sets lacked", () => {
    for (const domain of [
      "amazon.com",
      "microsoft.com",
      "nytimes.com",
      "theguardian.com",
      "nintendo.com",
      "deepseek.com",
      "bitcoin.org",
      "binance.com",
      "bbc.co.uk",
      "ft.com",
      "www.gov.uk",
      "walmart.com",
      "disney.com",
      "mercedes-benz.com",
    ]) {
      expect(byDomain.get(domain)?.logos.length, domain).toBeGreaterThan(0);
    }
  });

  it("sums itself up without importing", () => {
    const summary = seedSummary(catalogue);
    expect(summary.companies).toBe(catalogue.length);
    expect(Object.values(summary.perSet).reduce((a, b) => a + b, 0)).toBe(summary.logos);
    expect(Object.values(summary.perLicence).reduce((a, b) => a + b, 0)).toBe(summary.logos);
    expect(Object.keys(summary.perSet).sort()).toEqual(sourceSets.map((s) => s.id).sort());
  });
});

describe("the local seed's themes", () => {
  it("are decided now for what a first start shows at once, the example and the landing page's wall, and on first lookup for the rest", () => {
    for (const domain of [EXAMPLE_DOMAIN, ...WALL_DOMAINS])
      expect(themesWhenLocal({ domains: ["example.org", domain] })).toEqual({ themes: "now" });
    expect(themesWhenLocal({ domains: ["gitlab.com"] })).toEqual({ themes: "on first lookup" });
  });
});
