import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
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
}

const companyWithPrimaryDomain = (db: Db) =>
  db
    .select({ companyId: companies.id, companyName: companies.name, domain: companyDomains.domain })
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
 * Ranking: an exact domain, then an exact ticker, then names by closeness (the exact name,
 * then names that start with the query, then any other match of words or aliases), each tier
 * by BM25 relevance (names weigh most) with prominence breaking near-ties. The FTS index
 * narrows a million companies to the matching few before anything is ranked.
 */
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
  if (match && hits.length < limit) {
    const closeness = sql`CASE WHEN ${companies.nameKey} = ${key} THEN 0 WHEN substr(${companies.nameKey}, 1, ${key.length}) = ${key} THEN 1 ELSE 2 END`;
    const rows = await db
      .select({ companyId: companies.id, companyName: companies.name, domain: companyDomains.domain })
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

/** The host of a pasted URL (`https://www.stripe.com/pricing`), or null for anything else. */
function hostOfUrl(text: string): string | null {
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
export async function logosOfCompanies(db: Db, companyIds: number[]): Promise<Logo[]> {
  if (companyIds.length === 0) return [];
  return db.select().from(logos).where(inArray(logos.companyId, companyIds)).orderBy(asc(logos.variant), asc(logos.id)).all();
}

export async function logosOfCompany(db: Db, companyId: number): Promise<Logo[]> {
  return db.select().from(logos).where(eq(logos.companyId, companyId)).orderBy(asc(logos.variant), asc(logos.id)).all();
}
