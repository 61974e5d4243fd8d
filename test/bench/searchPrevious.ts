/**
 * The searchCompanies that src/catalogue/queries.ts had before the bounded-candidate one, kept
 * here so the search benchmark can measure both on the same catalogue. Not used by the service.
 *
 * It ranks every FTS match: each is joined to its company and primary domain, ordered by
 * closeness (the exact name, then names that start with the query, then any other match),
 * then by bm25 (name 10, aliases 6, domains 3, tickers 3) with prominence breaking near-ties.
 * `"a"*` matches 300,000 of a million companies, all ranked before the first five are known.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { companies, companyDomains } from "../../schema";
import { nameKey } from "../../src/catalogue/importLogo";
import { type CompanyMatch, findCompanyByDomain, findCompanyByTicker, ftsQuery, hostOfUrl, type SearchHit } from "../../src/catalogue/queries";
import type { Db } from "../../src/lib/db";
import { normaliseDomain } from "../../src/lib/domain";

export async function searchCompaniesPrevious(db: Db, query: string, limit: number): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  const seen = new Set<number>();
  const add = (match: CompanyMatch | null, matchedBy: SearchHit["matchedBy"]) => {
    if (match && !seen.has(match.companyId) && hits.length < limit) {
      seen.add(match.companyId);
      hits.push({ ...match, matchedBy });
    }
  };

  const trimmed = query.trim();
  const domain = normaliseDomain(hostOfUrl(trimmed) ?? trimmed);
  if (domain.ok) add(await findCompanyByDomain(db, domain.domain), "domain");
  if (/^[A-Za-z0-9.&:-]{1,24}$/.test(trimmed)) add(await findCompanyByTicker(db, trimmed), "ticker");

  const match = ftsQuery(trimmed);
  const key = nameKey(trimmed);
  if (match && hits.length < limit) {
    const closeness = sql`CASE WHEN ${companies.nameKey} = ${key} THEN 0 WHEN substr(${companies.nameKey}, 1, ${key.length}) = ${key} THEN 1 ELSE 2 END`;
    const rows = await db
      .select({ companyId: companies.id, companyName: companies.name, domain: companyDomains.domain, brandColor: companies.brandColor })
      .from(sql`catalogue_search`)
      .innerJoin(companies, sql`${companies.id} = catalogue_search.rowid`)
      .innerJoin(companyDomains, and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true)))
      .where(sql`catalogue_search MATCH ${match}`)
      // bm25 is lower-is-better; weights: name 10, aliases 6, domains 3, tickers 3.
      .orderBy(closeness, sql`bm25(catalogue_search, 10.0, 6.0, 3.0, 3.0) - 0.1 * ${companies.prominence}`, asc(companies.id))
      .limit(limit + hits.length)
      .all();
    for (const row of rows) add(row, "name");
  }
  return hits;
}
