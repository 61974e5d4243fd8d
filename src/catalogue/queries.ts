import { and, asc, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import { companies, companyDomains, companyTickers, type Logo, logos } from "../../schema";
import type { Db } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { nameKey } from "./importLogo";

/**
 * Read side of the catalogue: finding a company by domain, ticker or name, full-text search,
 * and a company's logos. Every lookup is an index read; search is one FTS5 query.
 */
export interface CompanyMatch {
  companyId: number;
  companyName: string;
  /** The company's primary domain. */
  domain: string;
  /** `#rrggbb`, where the catalogue knows it. */
  brandColor: string | null;
}

const companyWithPrimaryDomain = (db: Db) =>
  db
    .select({ companyId: companies.id, companyName: companies.name, domain: companyDomains.domain, brandColor: companies.brandColor })
    .from(companies)
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true)));

/**
 * The company a host belongs to: the exact host if the catalogue knows it (`docs.github.com`
 * can be a company of its own), otherwise its registrable domain (`shop.acme.co.uk` →
 * `acme.co.uk`). `host` must be normalised (see normaliseDomain).
 */
export async function findCompanyByDomain(db: Db, host: string): Promise<CompanyMatch | null> {
  const candidates = [host];
  const registrable = registrableDomain(host);
  if (registrable && registrable !== host) candidates.push(registrable);
  const rows = await db
    .select({ domain: companyDomains.domain, companyId: companyDomains.companyId })
    .from(companyDomains)
    .where(inArray(companyDomains.domain, candidates))
    .all();
  const hit = candidates.map((c) => rows.find((r) => r.domain === c)).find((r) => r !== undefined);
  if (!hit) return null;
  return (await companyWithPrimaryDomain(db).where(eq(companies.id, hit.companyId)).get()) ?? null;
}

/** `AAPL` or `NASDAQ:AAPL`; without an exchange, the most prominent holder of the symbol. */
export async function findCompanyByTicker(db: Db, input: string): Promise<CompanyMatch | null> {
  const [exchange, symbol] = input.includes(":") ? input.toUpperCase().split(":", 2) : [undefined, input.toUpperCase()];
  if (!symbol) return null;
  const holder = await db
    .select({ companyId: companyTickers.companyId })
    .from(companyTickers)
    .innerJoin(companies, eq(companies.id, companyTickers.companyId))
    .where(and(eq(companyTickers.ticker, symbol), exchange === undefined ? undefined : eq(companyTickers.exchange, exchange)))
    .orderBy(desc(companies.prominence), asc(companies.id))
    .get();
  if (!holder) return null;
  return (await companyWithPrimaryDomain(db).where(eq(companies.id, holder.companyId)).get()) ?? null;
}

/** Exact name, ignoring case, accents and punctuation; the most prominent company wins a tie. */
export async function findCompanyByName(db: Db, name: string): Promise<CompanyMatch | null> {
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
 * Built to stay fast at a million companies (`npm run bench:search`): nothing ranks every
 * match. A short prefix ("a") matches hundreds of thousands of companies, and ranking them
 * all by bm25 took 400 ms; instead
 *  - the name tiers read the most prominent names starting with the query from
 *    companies_name_key_idx (a range of the index), keeping those whose indexed words start
 *    with every query word, as the full-text match would;
 *  - the last tier ranks at most OTHER_CANDIDATES full-text matches, taken in index order.
 * Both are one D1 batch.
 */
const PREFIX_CANDIDATES_PER_HIT = 4;
const OTHER_CANDIDATES = 500;

export async function searchCompanies(db: Db, query: string, limit: number): Promise<SearchHit[]> {
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
  if (!match || key === "" || hits.length >= limit) return hits;

  const closeness = sql`${companies.nameKey} <> ${key}`;
  const startsWithQuery = db
    .select({ id: companies.id })
    .from(companies)
    .where(and(gte(companies.nameKey, key), lt(companies.nameKey, `${key}\u{10FFFF}`)))
    .orderBy(closeness, desc(companies.prominence), asc(companies.id))
    .limit(limit * PREFIX_CANDIDATES_PER_HIT)
    .as("starts_with_query");
  const named = db
    .select({
      companyId: companies.id,
      companyName: companies.name,
      domain: companyDomains.domain,
      brandColor: companies.brandColor,
      indexed: sql<string>`coalesce(catalogue_search.name, '') || ' ' || coalesce(catalogue_search.aliases, '') || ' ' || coalesce(catalogue_search.domains, '') || ' ' || coalesce(catalogue_search.tickers, '')`,
    })
    .from(startsWithQuery)
    .innerJoin(companies, eq(companies.id, startsWithQuery.id))
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true)))
    // The indexed text by rowid, no MATCH: a MATCH per row would merge the posting lists of
    // every word starting with the query again for each row.
    .innerJoin(sql`catalogue_search`, sql`catalogue_search.rowid = ${startsWithQuery.id}`)
    .orderBy(closeness, desc(companies.prominence), asc(companies.id));

  const candidates = db
    .select({ id: sql<number>`catalogue_search.rowid`.as("candidate_id") })
    .from(sql`catalogue_search`)
    .where(sql`catalogue_search MATCH ${match}`)
    .limit(OTHER_CANDIDATES)
    .as("candidates");
  const others = companyWithPrimaryDomain(db)
    .innerJoin(candidates, eq(candidates.id, companies.id))
    .orderBy(desc(companies.prominence), asc(companies.id))
    // Room for the companies of the name tiers, which match too and are skipped.
    .limit(limit * (PREFIX_CANDIDATES_PER_HIT + 1) + hits.length);

  const [namedRows, otherRows] = await db.batch([named, others]);
  const words = indexedWords(trimmed).slice(0, 12);
  for (const { indexed, ...row } of namedRows) {
    const tokens = indexedWords(indexed);
    if (words.every((word) => tokens.some((token) => token.startsWith(word)))) add(row, "name");
  }
  for (const row of otherRows) add(row, "name");
  return hits;
}

/**
 * Words as the full-text index (unicode61, remove_diacritics 2) sees them: lower case, accents
 * removed, split at anything but letters and digits.
 */
function indexedWords(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{Co}]+/gu) ?? []
  );
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
export async function findCompany(db: Db, companyId: number): Promise<CompanyMatch | null> {
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
export async function companyDetail(db: Db, companyId: number): Promise<CompanyDetail | null> {
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
export async function findLogo(db: Db, logoId: number): Promise<{ logo: Logo; company: CompanyMatch } | null> {
  const row = await db
    .select({ logo: logos, companyId: companies.id, companyName: companies.name, domain: companyDomains.domain, brandColor: companies.brandColor })
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
export async function logosOfCompanies(db: Db, companyIds: number[]): Promise<Logo[]> {
  if (companyIds.length === 0) return [];
  return db.select().from(logos).where(inArray(logos.companyId, companyIds)).orderBy(asc(logos.variant), asc(logos.id)).all();
}

export async function logosOfCompany(db: Db, companyId: number): Promise<Logo[]> {
  return db.select().from(logos).where(eq(logos.companyId, companyId)).orderBy(asc(logos.variant), asc(logos.id)).all();
}
