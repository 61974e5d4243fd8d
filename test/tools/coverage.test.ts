import { describe, expect, it } from "vitest";
import type { SeedCompany } from "../../tools/seed/catalogue";
import { consumerBrands, coverageOf, topSites } from "../../tools/seed/coverage";

const company = (name: string, domains: string[]): SeedCompany => ({ name, domains, aliases: [], prominence: 1, logos: [] });
const companies = [
  company("Acme", ["acme.com", "acme.co.uk"]),
  company("Acme Docs", ["docs.acme.com"]),
  company("Blogger", ["blogger.com"]),
];
const ownerOf = (host: string) => coverageOf([host], companies).hosts[0]!.company;

describe("counting the hosts the seed answers, as a lookup matches them", () => {
  it("answers a host by the company holding it, else by its registrable domain's", () => {
    expect(ownerOf("acme.com")).toBe("Acme");
    expect(ownerOf("www.acme.co.uk")).toBe("Acme");
    expect(ownerOf("shop.acme.com")).toBe("Acme");
    // The exact host first: a host that is a company of its own keeps it.
    expect(ownerOf("docs.acme.com")).toBe("Acme Docs");
    expect(ownerOf("ACME.com.")).toBe("Acme");
  });

  it("misses a look-alike, a user's site under a private suffix, and a host the lookup refuses", () => {
    expect(ownerOf("acme.com.example.org")).toBeNull();
    expect(ownerOf("someone.blogspot.com")).toBeNull();
    const refused = coverageOf(["marketingplatform.google...."], companies).hosts[0]!;
    expect(refused.company).toBeNull();
    expect(refused.why).toMatch(/refused by the lookup/);
  });

  it("counts what it answers", () => {
    expect(coverageOf(["acme.com", "nowhere.example", "blogger.com"], companies)).toMatchObject({ asked: 3, answered: 2 });
  });

  it("reads the two lists it is run on", () => {
    expect(topSites()).toHaveLength(500);
    expect(topSites()[0]).toBe("www.google.com");
    const brands = consumerBrands();
    expect(brands.length).toBeGreaterThanOrEqual(100);
    expect(new Set(brands).size).toBe(brands.length);
    for (const host of brands) expect(host).toMatch(/^[a-z0-9.-]+\.[a-z]+$/);
  });
});
