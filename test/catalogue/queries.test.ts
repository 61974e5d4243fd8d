import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { companyTickers } from "../../schema";
import { type CompanyLogoInput, importCompanyLogo } from "../../src/catalogue/importLogo";
import { findCompany, findCompanyByDomain, findCompanyByTicker } from "../../src/catalogue/companies";
import { findCompanyByName, ftsQuery, searchCompanies } from "../../src/catalogue/search";
import { logosOfCompany } from "../../src/catalogue/logos";
import { createDb } from "../../src/lib/db";
import { ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import { blackPng, preparedFrom } from "../fixtures/images";

const db = createDb(env.DB);
const ids: Record<string, number> = {};

async function add(name: string, domains: string[], extra: Partial<CompanyLogoInput> = {}) {
  const result = await importCompanyLogo(
    db,
    env.LOGOS,
    {
      name,
      domains,
      aliases: [],
      prominence: 0,
      variant: "icon",
      sourceSet: "test",
      licence: "CC0-1.0",
      sourceHash: await sha256Hex(name),
      ...extra,
    },
    async () => ok(await preparedFrom(blackPng)),
  );
  if (!result.ok) throw new Error(result.error.message);
  ids[name] = result.value.companyId;
}

beforeEach(async () => {
  await add("Stripe", ["stripe.com"], { prominence: 3 });
  await add("Stripe Bakery", ["stripebakery.example.com"]);
  await add("GitHub", ["github.com"], { aliases: ["GH"], brandColor: "#181717" });
  await add("GitHub Docs", ["docs.github.com"]);
  await add("Coca-Cola", ["coca-cola.com"], { ticker: { symbol: "KO", exchange: "NYSE" } });
  await add("Meta", ["meta.com"], { aliases: ["Facebook"], ticker: { symbol: "META", exchange: "NASDAQ" } });
  await add("Apple", ["apple.com"], { ticker: { symbol: "AAPL", exchange: "NASDAQ" }, prominence: 5 });
});

describe("findCompanyByDomain", () => {
  it("matches the exact host first, then its registrable domain", async () => {
    expect(await findCompanyByDomain(db, "github.com")).toEqual({
      companyId: ids.GitHub,
      companyName: "GitHub",
      nameSource: "catalogue",
      domain: "github.com",
      brandColor: "#181717",
    });
    expect((await findCompanyByDomain(db, "docs.github.com"))?.companyName).toBe("GitHub Docs");
    expect((await findCompanyByDomain(db, "gist.github.com"))?.companyName).toBe("GitHub");
    expect(await findCompanyByDomain(db, "unknown.example")).toBeNull();
  });
});

describe("findCompanyByTicker", () => {
  it("finds a symbol with or without its exchange, in any case", async () => {
    expect((await findCompanyByTicker(db, "ko"))?.companyName).toBe("Coca-Cola");
    expect((await findCompanyByTicker(db, "NASDAQ:AAPL"))?.companyName).toBe("Apple");
    expect(await findCompanyByTicker(db, "NYSE:AAPL")).toBeNull();
    expect(await findCompanyByTicker(db, "ZZZZ")).toBeNull();
  });

  it("finds a symbol held without an exchange under any exchange, unless the exchange asked for holds it", async () => {
    await add("Acme", ["acme.com"], { ticker: { symbol: "ACME", exchange: "" } });
    expect((await findCompanyByTicker(db, "NYSE:ACME"))?.companyName).toBe("Acme");
    expect((await searchCompanies(db, "nyse:acme", 5))[0]).toMatchObject({ companyName: "Acme", matchedBy: "ticker" });
    await add("Acme Listed", ["acmelisted.com"], { ticker: { symbol: "ACME", exchange: "NYSE" } });
    expect((await findCompanyByTicker(db, "NYSE:ACME"))?.companyName).toBe("Acme Listed");
    expect((await findCompanyByTicker(db, "LSE:ACME"))?.companyName).toBe("Acme");
  });

  it("finds a share class written with a dot or a dash either way, the spelling asked for first", async () => {
    await add("British Telecom", ["bt.example"], { ticker: { symbol: "BT.A", exchange: "LSE" } });
    await add("Hennes & Mauritz", ["hm.example"], { ticker: { symbol: "HM-B", exchange: "OMX" } });
    expect((await findCompanyByTicker(db, "BT-A"))?.companyName).toBe("British Telecom");
    expect((await findCompanyByTicker(db, "lse:bt-a"))?.companyName).toBe("British Telecom");
    expect((await findCompanyByTicker(db, "HM.B"))?.companyName).toBe("Hennes & Mauritz");
    expect((await searchCompanies(db, "HM.B", 5))[0]).toMatchObject({ companyName: "Hennes & Mauritz", matchedBy: "ticker" });
    // An import refuses a second holder of one spelling on one exchange; a catalogue written
    // before it did may hold one, and the spelling asked for is found first.
    await add("Dotted Class", ["dotted.example"]);
    await db.insert(companyTickers).values({ ticker: "HM.B", exchange: "OMX", companyId: ids["Dotted Class"]! });
    expect((await findCompanyByTicker(db, "HM.B"))?.companyName).toBe("Dotted Class");
    expect((await findCompanyByTicker(db, "HM-B"))?.companyName).toBe("Hennes & Mauritz");
    expect(await findCompanyByTicker(db, "BTA")).toBeNull();
  });

  it("finds a numeric code with or without its leading zeros", async () => {
    await add("Tencent", ["tencent.example"], { ticker: { symbol: "0700", exchange: "HKEX" } });
    await add("Samsung", ["samsung.example"], { ticker: { symbol: "005930", exchange: "KRX" } });
    for (const asked of ["0700", "700", "00700", "HKEX:700"])
      expect((await findCompanyByTicker(db, asked))?.companyName, asked).toBe("Tencent");
    expect((await findCompanyByTicker(db, "005930"))?.companyName).toBe("Samsung");
    expect(await findCompanyByTicker(db, "5930")).toBeNull();
    expect(await findCompanyByTicker(db, "7000")).toBeNull();
    expect(await findCompanyByTicker(db, "0")).toBeNull();
    await add("Imported Bare", ["bare.example"], { ticker: { symbol: "66", exchange: "HKEX" } });
    for (const asked of ["66", "0066", "HKEX:00066"])
      expect((await findCompanyByTicker(db, asked))?.companyName, asked).toBe("Imported Bare");
  });
});

describe("findCompanyByName", () => {
  it("ignores case and punctuation", async () => {
    expect((await findCompanyByName(db, "coca cola"))?.companyName).toBe("Coca-Cola");
    expect((await findCompanyByName(db, "GITHUB"))?.domain).toBe("github.com");
    expect(await findCompanyByName(db, "!!!")).toBeNull();
  });
});

describe("searchCompanies", () => {
  it("puts an exact domain or ticker first", async () => {
    expect((await searchCompanies(db, "stripe.com", 5))[0]).toMatchObject({ companyName: "Stripe", matchedBy: "domain" });
    expect((await searchCompanies(db, "AAPL", 5))[0]).toMatchObject({ companyName: "Apple", matchedBy: "ticker" });
  });

  it("matches name prefixes and aliases, whatever the case and punctuation", async () => {
    expect((await searchCompanies(db, "str", 5)).map((h) => h.companyName)).toEqual(["Stripe", "Stripe Bakery"]);
    expect((await searchCompanies(db, "FACEBOOK", 5)).map((h) => h.companyName)).toEqual(["Meta"]);
    expect((await searchCompanies(db, "coca-cola", 5)).map((h) => h.companyName)).toEqual(["Coca-Cola"]);
    expect((await searchCompanies(db, "github docs", 5)).map((h) => h.companyName)).toEqual(["GitHub Docs"]);
    // A name that only starts with the query must match its words, as the full-text match would.
    expect((await searchCompanies(db, "git hub do", 5)).map((h) => h.companyName)).toEqual([]);
  });

  it("finds the exact name however it is spaced or punctuated, as the lookup by name does", async () => {
    await add("McDonald's", ["mcdonalds.com"]);
    await add("T-Mobile", ["t-mobile.com"]);
    for (const [query, name] of [
      ["mcdonalds", "McDonald's"],
      ["cocacola", "Coca-Cola"],
      ["tmobile", "T-Mobile"],
      ["git hub docs", "GitHub Docs"],
    ]) {
      expect((await searchCompanies(db, query!, 5))[0]?.companyName, query).toBe(name);
      expect((await findCompanyByName(db, query!))?.companyName, query).toBe(name);
    }
  });

  it("ranks names by closeness before prominence: the exact name, then names that start with the query, then other matches", async () => {
    await add("Bakery Stripe Supplies", ["bakerystripe.com"], { prominence: 9 });
    await add("Stripes Apparel", ["stripes-apparel.com"], { prominence: 9 });
    // Exact beats a prefix match of far greater prominence; a prefix beats a later word.
    expect((await searchCompanies(db, "stripe", 5)).map((h) => h.companyName)).toEqual([
      "Stripe",
      "Stripes Apparel",
      "Stripe Bakery",
      "Bakery Stripe Supplies",
    ]);
    expect((await searchCompanies(db, "Stripe Bakery", 5)).map((h) => h.companyName)).toEqual(["Stripe Bakery", "Bakery Stripe Supplies"]);
    // Among names that start alike, the better known comes first.
    expect((await searchCompanies(db, "strip", 5)).map((h) => h.companyName).slice(0, 2)).toEqual(["Stripes Apparel", "Stripe"]);
  });

  it("finds a company from a pasted URL", async () => {
    expect((await searchCompanies(db, "https://www.stripe.com/pricing?x=1", 5))[0]).toMatchObject({
      companyName: "Stripe",
      matchedBy: "domain",
    });
  });

  it("respects the limit and never repeats a company", async () => {
    const hits = await searchCompanies(db, "github", 1);
    expect(hits).toHaveLength(1);
    const all = await searchCompanies(db, "github.com", 10);
    expect(new Set(all.map((h) => h.companyId)).size).toBe(all.length);
  });

  it("treats FTS5 syntax in the query as plain text and never fails", async () => {
    for (const query of ['"', "NEAR(a b)", "stripe OR apple", "*", "a:b", "-", "name:stripe"]) {
      await expect(searchCompanies(db, query, 5)).resolves.toBeInstanceOf(Array);
    }
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), async (query) => {
        await searchCompanies(db, query, 5);
      }),
      { numRuns: 200 },
    );
  });
});

describe("ftsQuery", () => {
  it("quotes every word as a prefix term", () => {
    expect(ftsQuery('Stripe "Inc" OR x*')).toBe('"stripe"* "inc"* "or"* "x"*');
    expect(ftsQuery("  ")).toBeNull();
  });
});

describe("logosOfCompany", () => {
  it("lists a company's logos", async () => {
    const stripe = await findCompany(db, ids.Stripe!);
    const [logo, ...others] = await logosOfCompany(db, stripe!);
    expect(others).toEqual([]);
    // Its keys are derived from the row and the company's primary domain.
    expect(logo).toMatchObject({
      variant: "icon",
      primaryDomain: "stripe.com",
      masterKey: expect.stringMatching(/^logos\/stripe\.com\/icon\.test\.[0-9a-f]{16}\.png$/),
    });
  });
});
