import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { companies, companyDomains, companyIdentifiers, companyTickers, logos } from "../../schema";
import { type CompanyMatch, type Logo, withKeys } from "./entities";
import type { CatalogueDb } from "../lib/db";
import { registrableDomain } from "../lib/domain";
import { tickerSpellings } from "./names";

/**
 * Finding a company by domain or ticker, or by id with everything the catalogue knows of it.
 * Identifiers (ISINs, crypto symbols) are ./identifiers.ts's.
 * Every lookup is one statement of index reads. Names and search are ./search.ts's; logos,
 * ./logos.ts's.
 */
/** The columns of a CompanyMatch, read with companyDomains joined on isPrimaryDomain. */
export const companyMatchColumns = {
  companyId: companies.id,
  companyName: companies.name,
  nameSource: companies.nameSource,
  domain: companyDomains.domain,
  brandColor: companies.brandColor,
};

/** The join of companyDomains to a company's primary domain. */
export const isPrimaryDomain = and(eq(companyDomains.companyId, companies.id), eq(companyDomains.isPrimary, true));

export const companyWithPrimaryDomain = (db: CatalogueDb) =>
  db.select(companyMatchColumns).from(companies).innerJoin(companyDomains, isPrimaryDomain);

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
export function companyByDomain(db: CatalogueDb, host: string) {
  const candidates = [host];
  const registrable = registrableDomain(host);
  if (registrable && registrable !== host) candidates.push(registrable);
  return db
    .select(companyMatchColumns)
    .from(matchedDomain)
    .innerJoin(companies, eq(companies.id, matchedDomain.companyId))
    .innerJoin(companyDomains, isPrimaryDomain)
    .where(inArray(matchedDomain.domain, candidates))
    .orderBy(desc(sql`${matchedDomain.domain} = ${host}`))
    .limit(1);
}

/**
 * `AAPL` or `NASDAQ:AAPL`; without an exchange, the most prominent holder of the symbol. A
 * symbol the catalogue holds without an exchange is found with any exchange, unless the
 * symbol is also held on the exchange asked for. A share class is written with a dot or a dash
 * alike (`BRK.B`, `BT-A`, `HM.B`): either spelling finds it, the one asked for first; a
 * numeric code with or without its leading zeros (`700`, `0700`).
 */
export async function findCompanyByTicker(db: CatalogueDb, input: string): Promise<CompanyMatch | null> {
  const statement = companyByTicker(db, input);
  return statement ? ((await statement.get()) ?? null) : null;
}

export function companyByTicker(db: CatalogueDb, input: string) {
  const parts = input.toUpperCase().split(":");
  // `EXCHANGE:SYMBOL` at most: `LSE:X:JUNK` is no ticker, not X.
  if (parts.length > 2) return null;
  const [exchange, symbol] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (!symbol) return null;
  const spellings = tickerSpellings(symbol);
  return companyWithPrimaryDomain(db)
    .innerJoin(companyTickers, eq(companyTickers.companyId, companies.id))
    .where(
      and(inArray(companyTickers.ticker, spellings), exchange === undefined ? undefined : inArray(companyTickers.exchange, [exchange, ""])),
    )
    .orderBy(
      ...(exchange === undefined ? [] : [desc(sql`${companyTickers.exchange} = ${exchange}`)]),
      desc(sql`${companyTickers.ticker} = ${symbol}`),
      desc(companies.prominence),
      asc(companies.id),
    )
    .limit(1);
}

/** A company by id, with its primary domain. */
export async function findCompany(db: CatalogueDb, companyId: number): Promise<CompanyMatch | null> {
  return (await companyWithPrimaryDomain(db).where(eq(companies.id, companyId)).get()) ?? null;
}

export interface CompanyDetail extends CompanyMatch {
  domains: string[];
  aliases: string[];
  tickers: { symbol: string; exchange: string | null }[];
  /** ISINs of its listed shares. */
  isins: string[];
  /** Symbols of its crypto assets. */
  crypto: string[];
  brandColor: string | null;
  logos: Logo[];
}

/** Everything the catalogue knows of a company: hosts (primary first), tickers, identifiers, aliases, logos. */
export async function companyDetail(db: CatalogueDb, companyId: number): Promise<CompanyDetail | null> {
  const [company, domains, tickers, identifiers, companyLogos] = await db.batch([
    db.select().from(companies).where(eq(companies.id, companyId)),
    db
      .select()
      .from(companyDomains)
      .where(eq(companyDomains.companyId, companyId))
      .orderBy(desc(companyDomains.isPrimary), asc(companyDomains.domain)),
    db.select().from(companyTickers).where(eq(companyTickers.companyId, companyId)).orderBy(asc(companyTickers.ticker)),
    db
      .select()
      .from(companyIdentifiers)
      .where(eq(companyIdentifiers.companyId, companyId))
      .orderBy(asc(companyIdentifiers.scheme), asc(companyIdentifiers.value)),
    db.select().from(logos).where(eq(logos.companyId, companyId)).orderBy(asc(logos.variant), asc(logos.id)),
  ]);
  const row = company[0];
  const primary = domains[0];
  if (!row || !primary) return null;
  return {
    companyId: row.id,
    companyName: row.name,
    nameSource: row.nameSource,
    domain: primary.domain,
    domains: domains.map((d) => d.domain),
    aliases: row.aliases,
    tickers: tickers.map((t) => ({ symbol: t.ticker, exchange: t.exchange === "" ? null : t.exchange })),
    isins: identifiers.filter((i) => i.scheme === "isin").map((i) => i.value),
    crypto: identifiers.filter((i) => i.scheme === "crypto").map((i) => i.value),
    brandColor: row.brandColor,
    logos: companyLogos.map((logo) => withKeys(logo, primary.domain)),
  };
}
