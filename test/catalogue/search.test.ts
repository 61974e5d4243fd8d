import { describe, expect, it } from "vitest";
import type { CompanyLogoInput } from "../../src/catalogue/importLogo";
import { searchCompanies } from "../../src/catalogue/queries";
import { blackPng, preparedFrom } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

const add = async (name: string, domains: string[], extra: Partial<CompanyLogoInput> = {}) =>
  addCompany({ name, domains, ...extra }, await preparedFrom(blackPng));

const names = async (query: string, limit: number) => (await searchCompanies(db, query, limit)).map((hit) => hit.companyName);

describe("searchCompanies, bounded", () => {
  it("still finds the other matches when the name tiers are full of names whose words do not match", async () => {
    // Their name keys start with "acmezeta", but no word of theirs starts with "zeta".
    for (const n of [1, 2, 3, 4, 5]) await add(`Acmez Eta ${n}`, [`acmezeta${n}.example`], { prominence: 9 });
    await add("Zeta Acme Labs", ["zetaacmelabs.example"]);
    expect(await names("acme zeta", 1)).toEqual(["Zeta Acme Labs"]);
    expect(await names("acme zeta", 5)).toEqual(["Zeta Acme Labs"]);
  });

  it("answers a typed prefix from its names, the best known first, and a short word from its word list", async () => {
    await add("Northwind Traders", ["northwind.example"], { prominence: 2 });
    await add("Northgate Labs", ["northgate.example"], { prominence: 7 });
    await add("Polar North", ["polarnorth.example"], { prominence: 9 });
    await add("Ursa Holdings", ["ursa.example"], { aliases: ["NW Ursa"], prominence: 1 });
    // Names that start with the query first, by prominence; then other words.
    expect(await names("nort", 5)).toEqual(["Northgate Labs", "Northwind Traders", "Polar North"]);
    expect(await names("no", 5)).toEqual(["Northgate Labs", "Northwind Traders", "Polar North"]);
    expect(await names("nw", 5)).toEqual(["Ursa Holdings"]);
    expect(await names("north la", 5)).toEqual(["Northgate Labs"]);
    // Every word must start a word: "ga" starts none of Northgate's.
    expect(await names("north ga", 5)).toEqual([]);
  });
});
