import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { companies, companyDomains, companyTickers, type Logo, logos } from "../../schema";
import type { CatalogueDb } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { nameKey } from "./importLogo";
import { indexedWords, leading, SHORT_PREFIX_LENGTH } from "./searchPrefixes";

/**
 * Read side of the catalogue: finding a company by domain, ticker or name, search, and a
 * company's logos. Every lookup is one statement of index reads; a search is one batch.
 */
export interface CompanyMatch {
  companyId: number;
  companyName: string;
  /** The company's primary domain. */
  domain: string;
}

const companyWithPrimaryDomain = (db: CatalogueDb) =>
  db
    .select({ companyId: companies.id, companyName: companies.name, domain: companyDomains.domain })
    .from(companies)
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true)));

/**
 * The company a host belongs to: the exact host if the catalogue knows it (`docs.github.com`
 * can be a company of its own), otherwise its registrable domain (`shop.acme.co.uk` →
 * `acme.co.uk`). `host` must be normalised (see normaliseDomain).
 */
export async function findCompanyByDomain(db: CatalogueDb, host: string): Promise<CompanyMatch | null> {
  return (await companyByDomain(db, host).get()) ?? null;
}

const matchedDomain = alias(companyDomains, "matched_domain");

/** One statement: the host and its registrable domain, the exact host first. */
function companyByDomain(db: CatalogueDb, host: string) {
  const candidates = [host];
  const registrable = registrableDomain(host);
  if (registrable && registrable !== host) candidates.push(registrable);
  return db
    .select({ companyId: companies.id, companyName: companies.name, domain: companyDomains.domain })
    .from(matchedDomain)
    .innerJoin(companies, eq(companies.id, matchedDomain.companyId))
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true)))
    .where(inArray(matchedDomain.domain, candidates))
    .orderBy(desc(sql`${matchedDomain.domain} = ${host}`))
    .limit(1);
}

/** `AAPL` or `NASDAQ:AAPL`; without an exchange, the most prominent holder of the symbol. */
export async function findCompanyByTicker(db: CatalogueDb, input: string): Promise<CompanyMatch | null> {
  const statement = companyByTicker(db, input);
  return statement ? ((await statement.get()) ?? null) : null;
}

function companyByTicker(db: CatalogueDb, input: string) {
  const [exchange, symbol] = input.includes(":") ? input.toUpperCase().split(":", 2) : [undefined, input.toUpperCase()];
  if (!symbol) return null;
  return companyWithPrimaryDomain(db)
    .innerJoin(companyTickers, eq(companyTickers.companyId, companies.id))
    .where(and(eq(companyTickers.ticker, symbol), exchange === undefined ? undefined : eq(companyTickers.exchange, exchange)))
    .orderBy(desc(companies.prominence), asc(companies.id))
    .limit(1);
}

/** Exact name, ignoring case, accents and punctuation; the most prominent company wins a tie. */
export async function findCompanyByName(db: CatalogueDb, name: string): Promise<CompanyMatch | null> {
  const key = nameKey(name);
  if (key === "") return null;
  return (
    (await companyWithPrimaryDomain(db)
      .where(eq(companies.nameKey, key))
      .orderBy(desc(companies.prominence), asc(companies.id))
      .get()) ?? null
  );
}

export interface SearchHit extends CompanyMatch {
  /** Why it matched: an exact domain or ticker outranks any name match. */
  matchedBy: "domain" | "ticker" | "name";
}

/**
 * Search by name (prefix, alias-aware, tolerant of case and punctuation), domain and ticker.
 * Ranking: an exact domain, then an exact ticker, then names by closeness: the exact name,
 * then names that start with the query, each by prominence, then any other match of the words
 * in names, aliases, domains or tickers, by prominence.
 *
 * Bounded by design: whatever the catalogue's size, a search reads a few hundred rows, in one
 * D1 batch (`npm run bench:scale`). Nothing ranks every match:
 *  - the names that start with the query come from the name prefix list of its first three
 *    characters (search_prefixes: the best known first) and, for a longer name key, also from
 *    the first RANGE_CANDIDATES names of its range of companies_name_key_idx; the exact name
 *    from its own range of that index, best known first. Candidates whose indexed words do not
 *    start with every query word are dropped, as the full-text match would drop them;
 *  - the other matches come from the full-text index for words longer than three characters
 *    (at most OTHER_CANDIDATES, taken in index order), or from a word prefix list when every
 *    word is short: a short prefix term would make the index merge the postings of every word
 *    it starts.
 * The lists hold the exact best-known companies of each prefix, so a short query ranks as
 * ranking every match would; a longer one does too unless its prefix is both crowded and far
 * from the best known of its first three characters.
 */
const PREFIX_CANDIDATES_PER_HIT = 4;
const RANGE_CANDIDATES = 200;
const OTHER_CANDIDATES = 500;

export async function searchCompanies(db: CatalogueDb, query: string, limit: number): Promise<SearchHit[]> {
  const trimmed = query.trim();
  const host = normaliseDomain(hostOfUrl(trimmed) ?? trimmed);
  const key = nameKey(trimmed);
  const words = indexedWords(trimmed).slice(0, 12);
  const byDomain = host.ok ? companyByDomain(db, host.domain) : null;
  const byTicker = /^[A-Za-z0-9.&:-]{1,24}$/.test(trimmed) ? companyByTicker(db, trimmed) : null;
  const byName = key !== "" && words.length > 0 ? [namedCandidates(db, key, limit), otherCandidates(db, words, limit)] : [];
  const statements = [byDomain, byTicker, ...byName].filter((statement) => statement !== null);
  const [first, ...rest] = statements;
  if (!first) return [];
  const results = (await db.batch([first, ...rest])) as unknown[][];

  const hits: SearchHit[] = [];
  const seen = new Set<number>();
  const add = (match: CompanyMatch | undefined, matchedBy: SearchHit["matchedBy"]) => {
    if (match && !seen.has(match.companyId) && hits.length < limit) {
      seen.add(match.companyId);
      hits.push({ companyId: match.companyId, companyName: match.companyName, domain: match.domain, matchedBy });
    }
  };
  let at = 0;
  if (byDomain) add((results[at++] as CompanyMatch[])[0], "domain");
  if (byTicker) add((results[at++] as CompanyMatch[])[0], "ticker");
  for (const rows of results.slice(at) as NameCandidate[][]) {
    for (const row of rows) {
      const tokens = row.indexed == null ? null : indexedWords(row.indexed);
      if (!tokens || words.every((word) => tokens.some((token) => token.startsWith(word)))) add(row, "name");
    }
  }
  return hits;
}

interface NameCandidate extends CompanyMatch {
  /** The company's indexed text, where the candidates' source did not match every word. */
  indexed?: string | null;
}

/** What the full-text index holds of a company, from the tables: the index keeps no copy. */
const indexedText = (id: SQL) => sql`(SELECT t.name || ' ' || t.aliases FROM companies t WHERE t.id = ${id})
  || ' ' || coalesce((SELECT group_concat(domain, ' ') FROM company_domains WHERE company_id = ${id}), '')
  || ' ' || coalesce((SELECT group_concat(ticker, ' ') FROM company_tickers WHERE company_id = ${id}), '')`;

/**
 * The candidates a statement finds, as a select of drizzle's builder: a raw statement (db.all)
 * cannot be batched with parameters (drizzle-orm 0.45's D1 batch binds only prepared queries).
 */
function rowsOf(db: CatalogueDb, query: SQL) {
  return db
    .select({
      companyId: sql<number>`companyId`,
      companyName: sql<string>`companyName`,
      domain: sql<string>`domain`,
      indexed: sql<string | null>`indexed`,
    })
    .from(sql`(${query})`);
}

/** The name tiers: the exact name, then names that start with the query, each by prominence. */
function namedCandidates(db: CatalogueDb, key: string, limit: number) {
  const wanted = limit * PREFIX_CANDIDATES_PER_HIT;
  const upper = `${key}\u{10FFFF}`;
  const sources = [
    sql`SELECT id FROM (SELECT id FROM companies WHERE name_key = ${key} ORDER BY prominence DESC, id LIMIT ${wanted})`,
    sql`SELECT company_id FROM search_prefixes WHERE kind = 'name' AND prefix = ${leading(key, SHORT_PREFIX_LENGTH)}`,
  ];
  if (Array.from(key).length > SHORT_PREFIX_LENGTH) {
    sources.push(
      sql`SELECT id FROM (SELECT id FROM companies WHERE name_key > ${key} AND name_key < ${upper} ORDER BY name_key, prominence DESC LIMIT ${RANGE_CANDIDATES})`,
    );
  }
  return rowsOf(db, sql`
    WITH candidates (id) AS (${sql.join(sources, sql` UNION `)}),
    ranked AS (
      SELECT c.id, c.name, c.name_key <> ${key} AS distant, c.prominence
      FROM candidates JOIN companies c ON c.id = candidates.id
      WHERE c.name_key >= ${key} AND c.name_key < ${upper}
      ORDER BY distant, c.prominence DESC, c.id LIMIT ${wanted}
    )
    SELECT r.id AS companyId, r.name AS companyName, d.domain AS domain, ${indexedText(sql`r.id`)} AS indexed
    FROM ranked r JOIN company_domains d ON d.company_id = r.id AND d.is_primary = 1
    ORDER BY r.distant, r.prominence DESC, r.id`);
}

/** The last tier: any other match of the words, by prominence. */
function otherCandidates(db: CatalogueDb, words: string[], limit: number) {
  const long = words.filter((word) => Array.from(word).length > SHORT_PREFIX_LENGTH);
  const longestShort = words.reduce((a, b) => (Array.from(b).length > Array.from(a).length ? b : a));
  const source =
    long.length > 0
      ? sql`SELECT rowid AS id FROM catalogue_search WHERE catalogue_search MATCH ${ftsQuery(long.join(" "))} LIMIT ${OTHER_CANDIDATES}`
      : sql`SELECT company_id AS id FROM search_prefixes WHERE kind = 'word' AND prefix = ${longestShort}`;
  // The source matched every word unless some were left out of it.
  const partial = long.length > 0 ? long.length < words.length : words.length > 1;
  return rowsOf(db, sql`
    SELECT c.id AS companyId, c.name AS companyName, d.domain AS domain, ${partial ? indexedText(sql`c.id`) : sql`NULL`} AS indexed
    FROM (${source}) f
    JOIN companies c ON c.id = f.id
    JOIN company_domains d ON d.company_id = c.id AND d.is_primary = 1
    ORDER BY c.prominence DESC, c.id
    LIMIT ${limit * (PREFIX_CANDIDATES_PER_HIT + 1) + 2}`);
}

/** The host of a pasted URL (`https://www.stripe.com/pricing`), or null for anything else. */
export function hostOfUrl(text: string): string | null {
  if (!/^https?:\/\//i.test(text)) return null;
  try {
    return new URL(text).hostname;
  } catch {
    return null;
  }
}

/**
 * Turns free text into an FTS5 query: each word becomes a quoted prefix term, all required.
 * Quoting makes every user character literal, so no input can inject FTS5 syntax.
 */
export function ftsQuery(text: string): string | null {
  const words = text
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu);
  if (!words || words.length === 0) return null;
  return words
    .slice(0, 12)
    .map((word) => `"${word}"*`)
    .join(" ");
}

/** A company by id, with its primary domain. */
export async function findCompany(db: CatalogueDb, companyId: number): Promise<CompanyMatch | null> {
  return (await companyWithPrimaryDomain(db).where(eq(companies.id, companyId)).get()) ?? null;
}

export interface CompanyDetail extends CompanyMatch {
  domains: string[];
  aliases: string[];
  tickers: { symbol: string; exchange: string | null }[];
  brandColor: string | null;
  logos: Logo[];
}

/** Everything the catalogue knows of a company: hosts (primary first), tickers, aliases, logos. */
export async function companyDetail(db: CatalogueDb, companyId: number): Promise<CompanyDetail | null> {
  const [company, domains, tickers, companyLogos] = await db.batch([
    db.select().from(companies).where(eq(companies.id, companyId)),
    db.select().from(companyDomains).where(eq(companyDomains.companyId, companyId)).orderBy(desc(companyDomains.isPrimary), asc(companyDomains.domain)),
    db.select().from(companyTickers).where(eq(companyTickers.companyId, companyId)).orderBy(asc(companyTickers.ticker)),
    db.select().from(logos).where(eq(logos.companyId, companyId)).orderBy(asc(logos.variant), asc(logos.id)),
  ]);
  const row = company[0];
  const primary = domains[0];
  if (!row || !primary) return null;
  return {
    companyId: row.id,
    companyName: row.name,
    domain: primary.domain,
    domains: domains.map((d) => d.domain),
    aliases: row.aliases,
    tickers: tickers.map((t) => ({ symbol: t.ticker, exchange: t.exchange === "" ? null : t.exchange })),
    brandColor: row.brandColor,
    logos: companyLogos,
  };
}

/** A logo by id, with the company it belongs to. */
export async function findLogo(db: CatalogueDb, logoId: number): Promise<{ logo: Logo; company: CompanyMatch } | null> {
  const row = await db
    .select({ logo: logos, companyId: companies.id, companyName: companies.name, domain: companyDomains.domain })
    .from(logos)
    .innerJoin(companies, eq(companies.id, logos.companyId))
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true)))
    .where(eq(logos.id, logoId))
    .get();
  if (!row) return null;
  const { logo, ...company } = row;
  return { logo, company };
}

/** The logos of several companies at once, for search results. */
export async function logosOfCompanies(db: CatalogueDb, companyIds: number[]): Promise<Logo[]> {
  if (companyIds.length === 0) return [];
  return db.select().from(logos).where(inArray(logos.companyId, companyIds)).orderBy(asc(logos.variant), asc(logos.id)).all();
}

export async function logosOfCompany(db: CatalogueDb, companyId: number): Promise<Logo[]> {
  return db.select().from(logos).where(eq(logos.companyId, companyId)).orderBy(asc(logos.variant), asc(logos.id)).all();
}
