import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { importCompanyLogo } from "../../src/catalogue/importLogo";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { searchCompanies } from "../../src/catalogue/search";
import { bookmarkOf, catalogueReader, catalogueWriter, createDb } from "../../src/lib/db";
import { unavailableIn } from "../../src/lib/dependencies";
import { ok } from "../../src/lib/errors";
import { blackPng, preparedFrom } from "../fixtures/images";

const input = {
  name: "Session Labs",
  domains: ["session-labs.com"],
  aliases: [],
  prominence: 0,
  variant: "icon" as const,
  sourceSet: "test",
  licence: "CC0-1.0",
  sourceHash: "5e".repeat(32),
};

describe("catalogue reads through D1 sessions", () => {
  it("reads back an import from a session that starts at the writer's bookmark", async () => {
    const writer = catalogueWriter(env.DB);
    const imported = await importCompanyLogo(writer, env.LOGOS, input, async () => ok(await preparedFrom(blackPng)));
    expect(imported.ok).toBe(true);
    const bookmark = bookmarkOf(writer);
    expect(bookmark).toEqual(expect.any(String));

    const reader = catalogueReader(env.DB, bookmark);
    expect(await findCompanyByDomain(reader, "session-labs.com")).toMatchObject({ companyName: "Session Labs" });
    expect((await searchCompanies(reader, "session", 5)).map((hit) => hit.companyName)).toEqual(["Session Labs"]);
  });

  it("gives a bookmark only for sessions", async () => {
    expect(bookmarkOf(createDb(env.DB))).toBeNull();
    const reader = catalogueReader(env.DB);
    await findCompanyByDomain(reader, "nothing.example");
    expect(bookmarkOf(reader)).toEqual(expect.any(String));
  });

  it("fails as an unavailable database, never a bare error, when a session's query fails", async () => {
    await env.DB.exec("DROP TABLE company_tickers");
    const error = await searchCompanies(catalogueReader(env.DB), "ABC", 5).catch((caught: unknown) => caught);
    expect(unavailableIn(error)?.dependency).toBe("database");
  });
});
