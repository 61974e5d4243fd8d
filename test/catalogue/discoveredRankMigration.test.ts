import { applyD1Migrations, reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { companies, searchPrefixes } from "../../schema";
import { DISCOVERED_SOURCE_SET } from "../../src/catalogue/provenance";
import { findCompanyByName, searchCompanies } from "../../src/catalogue/search";
import { searchPrefixesOf } from "../../src/catalogue/searchPrefixes";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

/**
 * migrations/0013 on a catalogue written before it, when discovery created companies at the
 * catalogue's default prominence (0): one named after a site's <title> beside the catalogue's
 * company of that name, imported later (a higher id), which name lookups and search ranked below it.
 */
const migrations = env.TEST_MIGRATIONS;
const at = migrations.findIndex((m) => m.name.startsWith("0013_"));

beforeEach(async () => {
  await reset();
  // The catalogue before 0013, written by today's write path, which needs 0014's table, 0017's
  // name columns, 0018's logo columns and the company identifiers' table too.
  const needed = migrations.filter((m) => /^001[478]_/.test(m.name) || m.name.endsWith("_company_identifiers.sql"));
  await applyD1Migrations(env.DB, [...migrations.slice(0, at), ...needed]);
});

describe("migration 0013", () => {
  it("ranks the companies discovery created below the catalogue's, in name lookups, search and the prefix lists", async () => {
    const site = await addCompany(
      { name: "Initech", domains: ["initech-lookalike.example"], sourceSet: DISCOVERED_SOURCE_SET, prominence: 0 },
      darkLogo40x20(),
    );
    const real = await addCompany(
      { name: "Initech", domains: ["initech.example"], prominence: 0 },
      { ...darkLogo40x20(), contentHash: "d".repeat(64) },
    );
    // Both imported and discovered logos: the catalogue's company, whatever discovery added to it.
    const mixed = await addCompany(
      { name: "Initrode", domains: ["initrode.example"], prominence: 0 },
      { ...darkLogo40x20(), contentHash: "e".repeat(64) },
    );
    await addCompany(
      { name: "Initrode", domains: ["initrode.example"], sourceSet: DISCOVERED_SOURCE_SET, prominence: 0, keepCompany: true },
      { ...darkLogo40x20(), contentHash: "f".repeat(64) },
    );
    expect((await findCompanyByName(db, "Initech"))?.companyId).toBe(site.companyId);

    await applyD1Migrations(env.DB, migrations.slice(at, at + 1));

    expect((await findCompanyByName(db, "Initech"))?.companyId).toBe(real.companyId);
    expect((await searchCompanies(db, "Initech", 5)).map((hit) => hit.domain)).toEqual(["initech.example", "initech-lookalike.example"]);
    const prominence = async (id: number) =>
      (await db.select({ p: companies.prominence }).from(companies).where(eq(companies.id, id)).get())!.p;
    expect([await prominence(site.companyId), await prominence(real.companyId), await prominence(mixed.companyId)]).toEqual([-1, 0, 0]);
    // Its list entries moved with it: every prefix it had, at its new standing.
    const entries = await db.select().from(searchPrefixes).where(eq(searchPrefixes.companyId, site.companyId)).all();
    expect(new Set(entries.map((e) => `${e.kind}:${e.prefix}`))).toEqual(
      searchPrefixesOf({ nameKey: "initech", name: "Initech", aliases: [], tickers: [] }),
    );
    expect(entries.every((e) => e.prominence === -1)).toBe(true);
    // And the code's upkeep works on it: an import of its domain gives it the catalogue's standing.
    await addCompany(
      { name: "Initech Lookalike", domains: ["initech-lookalike.example"], prominence: 3 },
      { ...darkLogo40x20(), contentHash: "a".repeat(64) },
    );
    expect(await prominence(site.companyId)).toBe(3);
  });
});
