import { asc, desc, eq, inArray, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { companies, companyDomains, type IdentifierScheme, type NameSource } from "../../schema";
import type { CatalogueDb } from "../lib/db";
import { normaliseDomain } from "../lib/domain";
import { domainNameKey, nameKey } from "./names";
import { indexedWords, leading, SHORT_PREFIX_LENGTH } from "./searchPrefixes";
import { companyByDomain, companyByTicker, companyMatchColumns, findCompanyByDomain, isPrimaryDomain } from "./companies";
import { type EmailDomain, emailDomain } from "./emailAddresses";
import { findCompanyByIdentifier, type Identifier, parseCryptoSymbol, parseIsin } from "./identifiers";
import type { CompanyMatch } from "./entities";

/**
 * Finding companies by name: the exact-name lookup, and search by name (prefix, alias-aware),
 * domain and ticker, ranked. A search is one batch of index reads.
 */

/**
 * Exact name, ignoring case, accents and punctuation; the most prominent company wins a tie.
 *
 * A company discovery made (prominence below 0) never owns a name its site gave: it answers
 * only a name derived from its own domain (domainNameKey: "Quillstone Labs" for
 * quillstone-labs.com), and only when no company of the catalogue has that name, as written or
 * without its legal form, nor has it as an alias. Between discovered companies no tie goes to
 * whoever came first: two of one domain name (acme.com and acme.de, both discovered) answer
 * neither.
 */
export async function findCompanyByName(db: CatalogueDb, name: string): Promise<CompanyMatch | null> {
  let discovered: CompanyMatch | null = null;
  for (const asked of [name, ...withoutLegalForm(name)]) {
    const key = nameKey(asked);
    if (key === "") continue;
    const found = await db
      .select({ ...companyMatchColumns, prominence: companies.prominence })
      .from(companies)
      .innerJoin(companyDomains, isPrimaryDomain)
      .where(eq(companies.nameKey, key))
      .orderBy(desc(companies.prominence), asc(companies.id))
      .limit(NAMESAKES)
      .all();
    const catalogued = found.find((row) => row.prominence >= 0);
    if (catalogued) return withoutProminence(catalogued);
    if (found.length === 0) continue;
    // A site calling itself "Twitter" leaves the name to the company whose alias it is.
    const aliased = await catalogueCompanyAliased(db, asked, key);
    if (aliased) return aliased;
    const owners = found.filter((row) => domainNameKey(row.domain) === key);
    if (owners.length === 1) discovered ??= withoutProminence(owners[0]!);
  }
  return discovered;
}

/** Companies of one name key read at most: the catalogue's first, then enough discovered ones to see a tie. */
const NAMESAKES = 8;
const withoutProminence = ({ prominence: _prominence, ...match }: CompanyMatch & { prominence: number }): CompanyMatch => match;

/**
 * The best known company of the catalogue (not one discovery made) with an alias whose name key
 * is `key`: among the best known companies with every word of it (the full-text index or the
 * word lists, as search's last tier reads them), not among search's answers, where names that
 * start with it would crowd it out.
 */
async function catalogueCompanyAliased(db: CatalogueDb, asked: string, key: string): Promise<CompanyMatch | null> {
  const words = indexedWords(asked).slice(0, 12);
  if (words.length === 0) return null;
  const owners = (await rowsOf(db, otherCandidates(words, ALIAS_CANDIDATES, null)))
    .filter((row) => row.prominence >= 0)
    .sort((x, y) => y.prominence - x.prominence || x.companyId - y.companyId);
  const kept = await aliasesOfCompanies(
    db,
    owners.map((row) => row.companyId),
  );
  const owner = owners.find((row) => kept.get(row.companyId)?.aliases.some((alias) => nameKey(alias) === key));
  return owner
    ? {
        companyId: owner.companyId,
        companyName: owner.companyName,
        nameSource: owner.nameSource,
        domain: owner.domain,
        brandColor: owner.brandColor,
      }
    : null;
}

/** Search's last tier read for this many hits when an alias's owner is looked for: some 200 companies, the best known first. */
const ALIAS_CANDIDATES = 40;

/**
 * Words that name a company's legal form, as people write them after its name ("Apple Inc.",
 * "Coca-Cola Co", "Siemens AG"), and that the catalogue's names mostly leave out; with a
 * leading "The" and an "and" between words (the catalogue's "&" is no word: "Johnson and
 * Johnson"). Dropped only when the name as written found nothing, and only where they stand so:
 * "Inc Magazine" and "Limited Brands" keep their words.
 */
const LEGAL_FORMS = new Set([
  "inc",
  "incorporated",
  "corp",
  "corporation",
  "co",
  "company",
  "ltd",
  "limited",
  "llc",
  "llp",
  "lp",
  "plc",
  "ag",
  "gmbh",
  "sa",
  "nv",
  "bv",
  "se",
  "spa",
  "oy",
  "ab",
  "as",
  "kk",
]);
const bare = (word: string) => word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");

/**
 * The query without its legal form, then also without a leading "The" and inner "and" (the
 * catalogue may keep those: "The Home Depot", "Barnes and Noble"); each only when it differs
 * from the query and leaves something. Empty when the query has none of them.
 */
export function withoutLegalForm(query: string): string[] {
  const words = query.trim().split(/\s+/);
  let end = words.length;
  while (end > 1 && LEGAL_FORMS.has(bare(words[end - 1]!))) end--;
  const named = words.slice(0, end);
  const start = named.length > 1 && bare(named[0]!) === "the" ? 1 : 0;
  const plain = named.slice(start).filter((word, i, all) => i === 0 || i === all.length - 1 || bare(word) !== "and");
  return [...new Set([named, plain].filter((kept) => kept.length > 0 && kept.length < words.length).map((kept) => kept.join(" ")))];
}

export interface SearchHit extends CompanyMatch {
  /**
   * Why it matched: an exact domain or ticker outranks any name match; an email address's
   * domain, an ISIN or a crypto symbol (`crypto:BTC`) is the only match of its query.
   */
  matchedBy: "domain" | "email" | "ticker" | "isin" | "crypto" | "name";
}

/** What names one company by a key of its own, and so finds that company alone. */
type KeyedQuery = { matchedBy: "email"; address: EmailDomain } | { matchedBy: IdentifierScheme; identifier: Identifier };

const CRYPTO_QUERY = /^crypto:(.+)$/i;

/**
 * A query that is an email address (`jane@stripe.com`), an ISIN (`US0378331005`, its check
 * digit valid) or a crypto symbol written `crypto:BTC` (a bare `BTC` is searched as any word,
 * and finds the coin by its alias); null for any other.
 */
export function keyedQuery(query: string): KeyedQuery | null {
  const trimmed = query.trim();
  if (trimmed.includes("@") && !/^https?:/i.test(trimmed)) return { matchedBy: "email", address: emailDomain(trimmed) };
  const isin = parseIsin(trimmed);
  if (isin.ok) return { matchedBy: "isin", identifier: { scheme: "isin", value: isin.value } };
  const crypto = CRYPTO_QUERY.exec(trimmed);
  const symbol = crypto ? parseCryptoSymbol(crypto[1]!) : null;
  return symbol?.ok ? { matchedBy: "crypto", identifier: { scheme: "crypto", value: symbol.value } } : null;
}

async function searchKeyed(db: CatalogueDb, keyed: KeyedQuery): Promise<SearchHit[]> {
  let company: CompanyMatch | null = null;
  if ("identifier" in keyed) company = await findCompanyByIdentifier(db, keyed.identifier);
  else if (keyed.address.kind === "company") company = await findCompanyByDomain(db, keyed.address.domain);
  return company ? [{ ...company, matchedBy: keyed.matchedBy }] : [];
}

/**
 * Search by name (prefix, alias-aware, tolerant of case and punctuation), domain and ticker;
 * an email address, an ISIN or `crypto:SYMBOL` finds its one company (keyedQuery). Ranking:
 * an exact domain, then an exact ticker, then names by closeness: the exact name,
 * then names that start with the query, each by prominence, then the other matches by
 * prominence: companies with a word (of the name, an alias or a ticker) starting with each
 * query word, and companies with a domain that starts with the query.
 *
 * Bounded by design: whatever the catalogue's size, a search reads at most a few thousand rows
 * (D1 bills rows read), in one statement (`npm run bench:scale`). Nothing ranks every match:
 *  - the names that start with the query come from the name prefix list of its first three
 *    characters (search_prefixes: the best known first) and, for a longer name key, also from
 *    the first RANGE_CANDIDATES names of its range of companies_name_key_idx; the exact name
 *    from its own range of that index, best known first. Candidates whose indexed words do not
 *    start with every query word are dropped, as the full-text match would drop them;
 *  - the other matches come from the full-text index for words longer than three characters
 *    (at most OTHER_CANDIDATES, taken in index order), or from a word prefix list when every
 *    word is short: a short prefix term would make the index merge the postings of every word
 *    it starts. A prefix term of a common word gathers all its postings before the first match
 *    is returned, so the words are first asked as they are typed, whole, which the index
 *    answers as it reads: when as many companies have the whole words, those are the
 *    candidates, and the prefix terms are not asked. Long words are asked as they are: asking
 *    them by their first four characters from a four-character prefix index read more rows,
 *    ranked worse and made the index a quarter larger (npm run bench:scale). Domains that
 *    start with the query come from the first DOMAIN_CANDIDATES of its range of
 *    company_domains' primary key. All are read only when the name tiers leave room.
 * The lists hold the exact best-known companies of each prefix, so a short query ranks as
 * ranking every match would; a longer one does too unless its prefix is both crowded and far
 * from the best known of its first three characters. A query that finds nothing is asked
 * once more without its legal-form words (withoutLegalForm), for the company of that name.
 */
const PREFIX_CANDIDATES_PER_HIT = 4;
const RANGE_CANDIDATES = 200;
const OTHER_CANDIDATES = 500;
const DOMAIN_CANDIDATES = 200;
/** Fewer when their text must be read to check the words the full-text query left out. */
const CHECKED_CANDIDATES = 200;

export async function searchCompanies(db: CatalogueDb, query: string, limit: number): Promise<SearchHit[]> {
  const keyed = keyedQuery(query);
  if (keyed) return searchKeyed(db, keyed);
  const hits = await searchAsWritten(db, query, limit);
  // "Apple Inc." finds Apple: asked again without its legal form, when as written found
  // nothing, and then only a company of exactly that name or alias ("Facebook Inc" for Meta),
  // or that ticker ("BP plc"), not every name it starts. Asked by its barest form, whose words
  // every such name has.
  const variants = hits.length === 0 ? withoutLegalForm(query) : [];
  if (variants.length === 0) return hits;
  const keys = new Set(variants.map(nameKey));
  // Names that start with what is left rank above an alias of exactly it, and are dropped
  // here: asked for more than are kept, so that they do not fill the answer's places.
  const found = await searchAsWritten(db, variants.at(-1)!, Math.max(limit, RETRY_CANDIDATES));
  const byName = found.filter((hit) => hit.matchedBy === "name" && !keys.has(nameKey(hit.companyName)));
  const aliased = await aliasesOfCompanies(
    db,
    byName.map((hit) => hit.companyId),
  );
  const kept = found.filter(
    (hit) =>
      hit.matchedBy !== "name" ||
      keys.has(nameKey(hit.companyName)) ||
      (aliased.get(hit.companyId)?.aliases ?? []).some((alias) => keys.has(nameKey(alias))),
  );
  return kept.slice(0, limit);
}

/** Candidates read when a query is asked again without its legal form. */
const RETRY_CANDIDATES = 25;

/** The aliases and prominence of a few companies, by id. */
async function aliasesOfCompanies(db: CatalogueDb, ids: number[]): Promise<Map<number, { aliases: string[]; prominence: number }>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: companies.id, aliases: companies.aliases, prominence: companies.prominence })
    .from(companies)
    .where(inArray(companies.id, ids))
    .all();
  return new Map(rows.map(({ id, ...company }) => [id, company]));
}

async function searchAsWritten(db: CatalogueDb, query: string, limit: number): Promise<SearchHit[]> {
  const trimmed = query.trim();
  const host = normaliseDomain(hostOfUrl(trimmed) ?? trimmed);
  const key = nameKey(trimmed);
  const words = indexedWords(trimmed).slice(0, 12);
  const byName = key !== "" && words.length > 0;
  const byTicker = /^[A-Za-z0-9.&:-]{1,24}$/.test(trimmed) ? companyByTicker(db, trimmed) : null;
  // Every tier is one arm of one statement, its rows ranked here by (tier, a, b, c). D1 counts
  // a row again each time a sort or a window passes it, so each arm sorts only what it must.
  const arms: SQL[] = [];
  const exact = (tier: number, statement: SQLWrapper) =>
    sql`SELECT ${tier} AS tier, 0 AS a, 0 AS b, 0 AS c, q.id AS companyId, q.name AS companyName, q.name_source AS nameSource, q.domain AS domain, q.brand_color AS brandColor, NULL AS indexed FROM (${statement}) q`;
  if (host.ok) arms.push(exact(TIER_DOMAIN, companyByDomain(db, host.domain)));
  if (byTicker) arms.push(exact(TIER_TICKER, byTicker));
  // The other matches are read only when the name tiers found fewer candidates than they
  // wanted: a typed prefix ("nort") is answered by its names, and the full-text candidates
  // would cost most of the rows the search reads.
  const wanted = limit * PREFIX_CANDIDATES_PER_HIT;
  const room = sql`(SELECT open FROM room)`;
  if (byName) arms.push(sql`SELECT * FROM named`, otherCandidates(words, limit, room));
  const domainStart = domainPrefix(trimmed);
  if (domainStart) arms.push(domainCandidates(domainStart, limit, byName ? room : null));
  if (arms.length === 0) return [];
  // Whether the catalogue's names left room, counted once for the arms that ask.
  const named = byName
    ? sql`WITH named AS MATERIALIZED (${namedCandidates(key, wanted)}), room AS MATERIALIZED (SELECT count(*) < ${wanted} AS open FROM named WHERE tier = ${TIER_NAMED}) `
    : sql``;
  const rows = await rowsOf(db, sql`${named}${sql.join(arms, sql` UNION ALL `)}`);

  const take = (found: typeof rows) => {
    const hits: SearchHit[] = [];
    const seen = new Set<number>();
    for (const row of found) {
      if (seen.has(row.companyId) || hits.length >= limit) continue;
      // The exact name, however it is spaced or punctuated ("mcdonalds", "coca cola" for
      // McDonald's, Coca-Cola), is the name asked for, as the lookup by name reads it too.
      const exactName = (row.tier === TIER_NAMED || row.tier === TIER_DISCOVERED) && row.distant === 0;
      if (row.indexed !== null && !exactName) {
        const tokens = indexedWords(row.indexed);
        if (!words.every((word) => tokens.some((token) => token.startsWith(word)))) continue;
      }
      seen.add(row.companyId);
      const matchedBy = row.tier === TIER_DOMAIN ? "domain" : row.tier === TIER_TICKER ? "ticker" : "name";
      hits.push({
        companyId: row.companyId,
        companyName: row.companyName,
        nameSource: row.nameSource,
        domain: row.domain,
        brandColor: row.brandColor,
        matchedBy,
      });
    }
    return hits;
  };
  // Every row ranked alike, whichever arm found it: a name that starts with the query is a name
  // match (the name tiers may have had no room for it), and a company discovery made comes after
  // the catalogue's matches, its name matches before its other ones. A discovered company's
  // name, for this, is its domain's (domainNameKey), never what its site says; and discovered
  // companies that tie are ordered by domain, not by which came first. The answer then does not
  // depend on how many the limit let the name tiers read.
  const ranked = (found: typeof rows) =>
    found
      .map((row) => {
        if (row.tier === TIER_DOMAIN || row.tier === TIER_TICKER) return row;
        if (row.prominence < 0) {
          const named = byName ? domainNameKey(row.domain) : "";
          if (byName && named.startsWith(key)) return { ...row, tier: TIER_DISCOVERED, distant: named === key ? 0 : 1 };
          return { ...row, tier: TIER_DISCOVERED, distant: 2 };
        }
        if (row.tier !== TIER_OTHER) return row;
        const named = byName ? nameKey(row.companyName) : "";
        if (byName && named.startsWith(key)) return { ...row, tier: TIER_NAMED, distant: named === key ? 0 : 1 };
        return row;
      })
      .sort(
        (x, y) =>
          x.tier - y.tier ||
          x.distant - y.distant ||
          y.prominence - x.prominence ||
          (x.tier === TIER_DISCOVERED ? (x.domain < y.domain ? -1 : x.domain > y.domain ? 1 : 0) : 0) ||
          x.companyId - y.companyId,
      );
  const hits = take(ranked(rows));
  // The name tiers were full but their words did not match often enough: the other matches
  // after all, in a statement of their own, ranked with the first ones.
  const namedRows = rows.filter((row) => row.tier === TIER_NAMED).length;
  if (!byName || hits.length >= limit || namedRows < wanted) return hits;
  const others = [otherCandidates(words, limit, null), ...(domainStart ? [domainCandidates(domainStart, limit, null)] : [])];
  return take(ranked([...rows, ...(await rowsOf(db, sql.join(others, sql` UNION ALL `)))]));
}

/**
 * Ranking tiers. A company discovery named after what its site says of itself ranks by its
 * name below every match of the catalogue's (an alias, a word, the start of a domain): a site
 * calling itself "Twitter" comes after the company whose alias that is.
 */
const [TIER_DOMAIN, TIER_TICKER, TIER_NAMED, TIER_OTHER, TIER_DISCOVERED] = [0, 1, 2, 3, 4];

/**
 * The rows of the arms, in no order: their callers rank them (`ranked`), and a sort here as well
 * would pass every row again, which D1 counts as read. Drizzle's builder, as raw statements
 * cannot be batched with parameters.
 */
function rowsOf(db: CatalogueDb, arms: SQL) {
  return db
    .select({
      tier: sql<number>`tier`,
      distant: sql<number>`a`,
      prominence: sql<number>`-b`,
      companyId: sql<number>`companyId`,
      companyName: sql<string>`companyName`,
      nameSource: sql<NameSource>`nameSource`,
      domain: sql<string>`domain`,
      brandColor: sql<string | null>`brandColor`,
      indexed: sql<string | null>`indexed`,
    })
    .from(sql`(${arms})`);
}

/**
 * The text whose words (indexedWords) the full-text index holds of the company row `c`, from
 * the tables (the index keeps no copy): name, aliases (as JSON, whose punctuation splits words
 * all the same), tickers.
 */
export const indexedText = (c: SQL) => sql`${c}.name || ' ' || ${c}.aliases
  || ' ' || coalesce((SELECT group_concat(ticker, ' ') FROM company_tickers WHERE company_id = ${c}.id), '')`;

/**
 * The name tiers: the exact name, then names that start with the query, each by prominence
 * (a = not the exact name, b = −prominence, c = id). Candidates come with their name key and
 * prominence from the prefix list and from covering reads of companies_name_key_idx, whose
 * order is the ranking's within a name; only the best `wanted` are read in full. Companies
 * discovery made rank in a tier of their own, after every other match (TIER_DISCOVERED).
 */
function namedCandidates(key: string, wanted: number): SQL {
  const upper = `${key}\u{10FFFF}`;
  const short = Array.from(key).length <= SHORT_PREFIX_LENGTH;
  // Each company once (it may come from both sources): a place taken twice is one a name
  // further down never gets, and the answer would then depend on how many the limit leaves.
  const candidates = short
    ? // The list is exactly the best known of this prefix; the exact name from its own range.
      sql`SELECT * FROM (SELECT id, 0 AS distant, prominence FROM companies WHERE name_key = ${key} ORDER BY prominence DESC, id LIMIT ${wanted})
        UNION ALL
        SELECT company_id, 1, prominence FROM search_prefixes WHERE kind = 'name' AND prefix = ${key}
          AND company_id NOT IN (SELECT id FROM companies WHERE name_key = ${key})`
    : // The best known of the first three characters that start with the whole key, and the
      // first names of the key's range (the exact name, if any, first).
      sql`SELECT c.id AS id, c.name_key <> ${key} AS distant, c.prominence AS prominence FROM search_prefixes s JOIN companies c ON c.id = s.company_id
          WHERE s.kind = 'name' AND s.prefix = ${leading(key, SHORT_PREFIX_LENGTH)} AND c.name_key >= ${key} AND c.name_key < ${upper}
        UNION
        SELECT * FROM (SELECT id, name_key <> ${key}, prominence FROM companies WHERE name_key >= ${key} AND name_key < ${upper}
          ORDER BY name_key, prominence DESC LIMIT ${RANGE_CANDIDATES})`;
  // The catalogue's names first: a company discovery made takes a place only where they leave one.
  return sql`SELECT CASE WHEN r.prominence < 0 THEN ${TIER_DISCOVERED} ELSE ${TIER_NAMED} END AS tier, r.distant AS a, -r.prominence AS b, r.id AS c,
      c.id AS companyId, c.name AS companyName, c.name_source AS nameSource, d.domain AS domain, c.brand_color AS brandColor, ${indexedText(sql`c`)} AS indexed
    FROM (
      SELECT * FROM (${candidates}) ORDER BY prominence < 0, distant, prominence DESC, id LIMIT ${wanted}
    ) r
    JOIN companies c ON c.id = r.id
    JOIN company_domains d ON d.company_id = r.id AND d.is_primary = 1`;
}

/**
 * The last tier: any other match of the words, by prominence (a = 0, b = −prominence, c = id);
 * read only when `needed` holds.
 */
function otherCandidates(words: string[], limit: number, needed: SQL | null): SQL {
  const long = words.filter((word) => Array.from(word).length > SHORT_PREFIX_LENGTH);
  const longestShort = words.reduce((a, b) => (Array.from(b).length > Array.from(a).length ? b : a));
  // The source matched every word unless some were left out of it: those are checked on the
  // indexed text, before the best known are taken (the source is bounded). Otherwise room for
  // the companies of the other tiers, which match too and are skipped.
  const partial = long.length > 0 ? long.length < words.length : words.length > 1;
  const candidates = partial ? CHECKED_CANDIDATES : OTHER_CANDIDATES;
  const taken = partial ? candidates : limit * (PREFIX_CANDIDATES_PER_HIT + 1) + 2;
  const best =
    long.length > 0
      ? sql`SELECT c.id AS id, c.prominence AS prominence FROM (${fullTextCandidates(long, bounded(candidates, needed), candidates)}) f
          JOIN companies c ON c.id = f.id ORDER BY c.prominence DESC, c.id LIMIT ${taken}`
      : sql`SELECT company_id AS id, prominence FROM search_prefixes WHERE kind = 'word' AND prefix = ${longestShort}
          ORDER BY prominence DESC, company_id LIMIT ${bounded(taken, needed)}`;
  return sql`SELECT ${TIER_OTHER} AS tier, 0 AS a, -r.prominence AS b, r.id AS c,
      c.id AS companyId, c.name AS companyName, c.name_source AS nameSource, d.domain AS domain, c.brand_color AS brandColor, ${partial ? indexedText(sql`c`) : sql`NULL`} AS indexed
    FROM (${best}) r
    JOIN companies c ON c.id = r.id
    JOIN company_domains d ON d.company_id = r.id AND d.is_primary = 1`;
}

/**
 * Up to `count` companies with a word starting with each of `words`, in index order. The whole
 * words first: the index answers them as it reads, where a prefix term first gathers every
 * posting of every word it starts. Only when fewer than `full` companies have the whole words
 * are the prefix terms asked (a LIMIT of 0 reads nothing, where a WHERE would read them all).
 */
function fullTextCandidates(words: string[], count: SQL, full: number): SQL {
  return sql`WITH whole AS MATERIALIZED (SELECT rowid AS id FROM catalogue_search WHERE catalogue_search MATCH ${fullTextTerms(words, false)} LIMIT ${count})
    SELECT id FROM whole WHERE (SELECT count(*) FROM whole) >= ${full}
    UNION ALL
    SELECT * FROM (SELECT rowid AS id FROM catalogue_search WHERE catalogue_search MATCH ${fullTextTerms(words, true)}
      LIMIT CASE WHEN (SELECT count(*) FROM whole) < ${full} THEN ${count} ELSE 0 END)`;
}

/**
 * Companies with a domain that starts with `start`, in the last tier by prominence: the first
 * DOMAIN_CANDIDATES of its range of company_domains' primary key, read only when `needed` holds.
 */
function domainCandidates(start: string, limit: number, needed: SQL | null): SQL {
  return sql`SELECT ${TIER_OTHER} AS tier, 0 AS a, -r.prominence AS b, r.id AS c,
      r.id AS companyId, r.name AS companyName, r.name_source AS nameSource, d.domain AS domain, r.brand_color AS brandColor, NULL AS indexed
    FROM (
      SELECT DISTINCT c.id, c.name, c.name_source, c.brand_color, c.prominence FROM (
        SELECT company_id FROM company_domains WHERE domain >= ${start} AND domain < ${`${start}\u{10FFFF}`} LIMIT ${bounded(DOMAIN_CANDIDATES, needed)}
      ) m JOIN companies c ON c.id = m.company_id
      ORDER BY c.prominence DESC, c.id LIMIT ${limit * (PREFIX_CANDIDATES_PER_HIT + 1) + 2}
    ) r
    JOIN company_domains d ON d.company_id = r.id AND d.is_primary = 1`;
}

/** `count`, or 0 unless `needed` holds: a LIMIT of 0 reads nothing, where a WHERE would read them all. */
const bounded = (count: number, needed: SQL | null) => (needed ? sql`CASE WHEN ${needed} THEN ${count} ELSE 0 END` : sql`${count}`);

/**
 * The start of a domain the query may be typing (`stripe`, `qf.i`, `www.acme.co.u`, a pasted
 * URL's host), or null for text no domain starts with.
 */
export function domainPrefix(text: string): string | null {
  const host = (hostOfUrl(text) ?? text).toLowerCase().replace(/^www\./, "");
  return /^[a-z0-9][a-z0-9.-]*$/.test(host) ? host : null;
}

/**
 * The host of a pasted URL (`https://www.stripe.com/pricing`), or of a host pasted with a
 * port, path, query or fragment but no scheme (`www.acme.com/pricing`, `stripe.com:443`); null
 * for anything else. A bare `stripe.com` is read as it is by the callers.
 */
export function hostOfUrl(text: string): string | null {
  const url = /^https?:\/\//i.test(text) ? text : HOST_WITH_MORE.test(text) ? `http://${text}` : null;
  if (url === null) return null;
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

// A dotted host, then a port, a path, a query or a fragment. A port is digits, so that an
// exchange and ticker (`NYSE:ACME`) is never read as a host.
const HOST_WITH_MORE = /^[^\s/?#:@\\]+\.[^\s/?#:@\\]+(?::\d{1,5}(?:[/?#]\S*)?|[/?#]\S*)$/;

/**
 * Turns free text into an FTS5 query: each of its first 12 words (indexedWords, the words the
 * index holds) becomes a quoted term, all required; a prefix term unless `prefix` is false.
 */
export function ftsQuery(text: string, prefix = true): string | null {
  const words = indexedWords(text).slice(0, 12);
  return words.length === 0 ? null : fullTextTerms(words, prefix);
}

/**
 * Folded words hold only letters, digits and private-use characters, so a quoted word is a
 * literal term and no input can inject FTS5 syntax. The tokenizer folds nothing further
 * (migrations/0012): a term is a word as the index holds it.
 */
const fullTextTerms = (words: string[], prefix: boolean) => words.map((word) => `"${word}"${prefix ? "*" : ""}`).join(" ");
