/**
 * The ranking of searchCompanies (src/catalogue/queries.ts) computed the exhaustive way, for the
 * scale benchmark to check the bounded search against: every name that starts with the query,
 * every full-text match of every word and every domain that starts with the query, each ranked
 * in full. Not used by the service: a
 * one-letter query sorts a twentieth of the catalogue.
 */
import { sql } from "drizzle-orm";
import { nameKey } from "../../src/catalogue/names";
import { findCompanyByDomain, findCompanyByTicker } from "../../src/catalogue/companies";
import type { CompanyMatch } from "../../src/catalogue/entities";
import { domainPrefix, ftsQuery, hostOfUrl, indexedText, type SearchHit } from "../../src/catalogue/search";
import { indexedWords } from "../../src/catalogue/searchPrefixes";
import type { CatalogueDb } from "../../src/lib/db";
import { normaliseDomain } from "../../src/lib/domain";

const PAGE = 500;

export async function searchCompaniesReference(db: CatalogueDb, query: string, limit: number): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  const seen = new Set<number>();
  const add = (match: CompanyMatch | null | undefined, matchedBy: SearchHit["matchedBy"]) => {
    if (match && !seen.has(match.companyId) && hits.length < limit) {
      seen.add(match.companyId);
      hits.push({
        companyId: match.companyId,
        companyName: match.companyName,
        nameSource: match.nameSource,
        domain: match.domain,
        brandColor: match.brandColor,
        matchedBy,
      });
    }
  };
  const trimmed = query.trim();
  const domain = normaliseDomain(hostOfUrl(trimmed) ?? trimmed);
  if (domain.ok) add(await findCompanyByDomain(db, domain.domain), "domain");
  if (/^[A-Za-z0-9.&:-]{1,24}$/.test(trimmed)) add(await findCompanyByTicker(db, trimmed), "ticker");
  const key = nameKey(trimmed);
  const words = indexedWords(trimmed).slice(0, 12);
  const match = ftsQuery(trimmed);
  if (key === "" || words.length === 0 || !match) return hits;
  const passes = (indexed: string) => {
    const tokens = indexedWords(indexed);
    return words.every((word) => tokens.some((token) => token.startsWith(word)));
  };

  // Every name of the range, in ranking order, a page at a time until enough pass the word check.
  for (let offset = 0; hits.length < limit; offset += PAGE) {
    const rows = await db.all<CompanyMatch & { indexed: string; exact: number }>(sql`
      SELECT c.id AS companyId, c.name AS companyName, d.domain AS domain, c.brand_color AS brandColor, ${indexedText(sql`c`)} AS indexed,
        c.name_key = ${key} AS exact
      FROM companies c JOIN company_domains d ON d.company_id = c.id AND d.is_primary = 1
      WHERE c.name_key >= ${key} AND c.name_key < ${`${key}\u{10FFFF}`}
      ORDER BY c.name_key <> ${key}, c.prominence DESC, c.id LIMIT ${PAGE} OFFSET ${offset}`);
    // The exact name passes however it is spaced or punctuated.
    for (const row of rows) if (row.exact === 1 || passes(row.indexed)) add(row, "name");
    if (rows.length < PAGE) break;
  }
  // Every full-text match and every company with a domain that starts with the query, by prominence.
  const start = domainPrefix(trimmed);
  const domainStarts = start
    ? sql`UNION SELECT company_id FROM company_domains WHERE domain >= ${start} AND domain < ${`${start}\u{10FFFF}`}`
    : sql``;
  const others = await db.all<CompanyMatch>(sql`
    SELECT c.id AS companyId, c.name AS companyName, d.domain AS domain, c.brand_color AS brandColor
    FROM (SELECT rowid AS id FROM catalogue_search WHERE catalogue_search MATCH ${match} ${domainStarts}) m
    JOIN companies c ON c.id = m.id
    JOIN company_domains d ON d.company_id = c.id AND d.is_primary = 1
    ORDER BY c.prominence DESC, c.id LIMIT ${limit * 5 + 2}`);
  for (const row of others) add(row, "name");
  return hits;
}
