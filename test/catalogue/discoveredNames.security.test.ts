import { exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { companies } from "../../schema";
import { domainName, nameKey } from "../../src/catalogue/names";
import { DISCOVERED_PROMINENCE, DISCOVERED_SOURCE_SET } from "../../src/catalogue/provenance";
import { findCompanyByName, searchCompanies } from "../../src/catalogue/search";
import { rest, secretKeyFor } from "../api/helpers";
import { claimSite, image, page, png } from "../discovery/helpers";
import { preparedFrom } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";
import { BASE, freshKey } from "../lookup/helpers";
import { agent, structured } from "../mcp/helpers";

/**
 * A discovered company never owns a name: /name/, search's name tiers, fetch_logo, insert_logo
 * and /v1/companies/lookup?name= answer one for a name only where that name is derived from its
 * own domain, and between discovered companies no tie goes to whoever came first.
 */
const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });
const suffix = () => crypto.randomUUID().slice(0, 6);

/** A discovered company as discovery writes it, its name what `nameSource` says. */
async function discovered(domain: string, name: string, nameSource: "site" | "domain", hash: string) {
  return addCompany(
    { name, nameSource, domains: [domain], prominence: DISCOVERED_PROMINENCE, sourceSet: DISCOVERED_SOURCE_SET, keepCompany: true },
    await preparedFrom(png(40, 40), { contentHash: hash.repeat(64) }),
  );
}

describe("names discovered companies answer", () => {
  it("two sites with one title: neither owns /name/ of it, and each answers its domain's name", async () => {
    const title = `Initrode ${suffix()}`;
    const [a, b] = [await claimSite({}), await claimSite({})];
    for (const site of [a, b])
      await site.set({ "/": page(`<title>${title}</title><link rel="icon" href="/i.png">`), "/i.png": image(png(64, 64)) });
    for (const site of [a, b])
      expect((await get(`/${site.host}?token=${await freshKey()}`)).headers.get("x-logo-source")).toBe("discovered");

    expect((await get(`/name/${encodeURIComponent(title)}?token=${await freshKey()}`)).status).toBe(404);
    expect(await findCompanyByName(db, title)).toBeNull();
    expect(
      (await searchCompanies(db, title, 5)).filter((hit) => hit.matchedBy === "name" && nameKey(hit.companyName) === nameKey(title)),
    ).toEqual([]);
    const own = await get(`/name/${encodeURIComponent(domainName(a.host))}?token=${await freshKey()}`);
    expect(own.headers.get("x-logo-source")).toBe("discovered");
  });

  it("a title stored before names were earned owns nothing, whoever came first", async () => {
    const title = `Globex ${suffix()}`;
    const first = await discovered(`first-${suffix()}.com`, title, "site", "a");
    // As discovery stored it then: its name key the title's.
    await db
      .update(companies)
      .set({ nameKey: nameKey(title) })
      .where(eq(companies.id, first.companyId));
    await discovered(`second-${suffix()}.com`, title, "site", "b");
    expect(await findCompanyByName(db, title)).toBeNull();
    const { key } = await secretKeyFor();
    expect((await rest(`/v1/companies/lookup?name=${encodeURIComponent(title)}`, key)).status).toBe(404);
    const { call } = await agent();
    expect((await call("fetch_logo", { query: title })).isError).toBe(true);
  });

  it("two discovered companies of one domain name: the name answers neither (no tie goes to the first)", async () => {
    const label = `hooli-${suffix()}`;
    await discovered(`${label}.com`, domainName(`${label}.com`), "domain", "c");
    await discovered(`${label}.de`, domainName(`${label}.de`), "domain", "d");
    expect(await findCompanyByName(db, domainName(`${label}.com`))).toBeNull();
    expect((await get(`/name/${encodeURIComponent(domainName(`${label}.com`))}?token=${await freshKey()}`)).status).toBe(404);
    const { call } = await agent();
    expect((await call("fetch_logo", { query: domainName(`${label}.com`) })).isError).toBe(true);
    // Search lists both, ordered by domain rather than by which came first.
    const hits = await searchCompanies(db, domainName(`${label}.com`), 5);
    expect(hits.map((hit) => hit.domain)).toEqual([`${label}.com`, `${label}.de`]);
  });

  it("a catalogue company of the name always answers it", async () => {
    const label = `vandelay-${suffix()}`;
    await discovered(`${label}.com`, domainName(`${label}.com`), "domain", "e");
    const real = await addCompany(
      { name: domainName(`${label}.com`), domains: [`${label}-industries.com`] },
      await preparedFrom(png(40, 20)),
    );
    expect((await findCompanyByName(db, domainName(`${label}.com`)))?.companyId).toBe(real.companyId);
  });
});

describe("where a name came from, on the wire", () => {
  it("REST and MCP answers carry nameSource, and a discovered name is plain text", async () => {
    const domain = `legacy-${suffix()}.com`;
    const legacy = await discovered(domain, "<img src=x onerror=alert(1)>Legacy", "site", "f");
    const { key } = await secretKeyFor();
    const body = (await (await rest(`/v1/companies/lookup?domain=${domain}`, key)).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ companyId: legacy.companyId, companyName: "Legacy", nameSource: "site" });
    const search = (await (await rest(`/v1/companies/search?q=${domain}`, key)).json()) as { results: Array<Record<string, unknown>> };
    expect(search.results[0]).toMatchObject({ companyName: "Legacy", nameSource: "site" });

    const { call } = await agent();
    const found = structured<{ results: Array<Record<string, unknown>> }>(await call("search_logos", { query: domain }));
    expect(found.results[0]).toMatchObject({ companyName: "Legacy", nameSource: "site" });
    expect(JSON.stringify(found)).not.toContain("onerror");
    const name = `Curated ${suffix()}`;
    await addCompany({ name, domains: [`curated-${suffix()}.com`] }, await preparedFrom(png(40, 20)));
    const curated = structured<{ results: Array<Record<string, unknown>> }>(await call("search_logos", { query: name }));
    expect(curated.results[0]).toMatchObject({ companyName: name, nameSource: "catalogue" });
  });
});
