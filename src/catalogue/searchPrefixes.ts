import { and, eq, isNull, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type SearchPrefixKind, searchPrefixes, searchPrefixLists } from "../../schema";
import type { CatalogueDb } from "../lib/db";

/**
 * The prefix lists of search (`search_prefixes`): for every prefix of one to three characters,
 * the best-known companies it leads to, best first (prominence, then id). A one-letter search
 * would otherwise rank a twentieth of the catalogue; with the lists it reads one list.
 *
 *   name  companies whose name key starts with the prefix (the name tiers of a search)
 *   word  companies with an indexed word that starts with it: a word of the name, an alias or
 *         a ticker (the other matches of a search, as the full-text index holds them)
 *
 * A list holds at most SEARCH_PREFIX_LIST_SIZE companies. Once a list has been full it has a
 * floor, the rank of the best company it left out, and only a company ranking above the floor
 * joins it; so a list is always exactly the companies of its prefix that rank above its floor,
 * and its head is the exact ranking. A company that is renamed away or removed leaves its lists
 * shorter by one instead of leaving a gap that only a scan of the catalogue could fill. The
 * triggers of migrations/0009 count each list and set its floor; 0009 filled the lists of the
 * companies already there from the words the full-text index holds, and 0011 the word lists
 * again when domains left the index.
 *
 * The write path (importCompanyLogo) keeps the lists in the same transaction as the company's
 * rows, with the statements of `searchPrefixUpkeep`.
 */
export const SEARCH_PREFIX_LIST_SIZE = 64; // also in the triggers of migrations/0009
export const SHORT_PREFIX_LENGTH = 3;

/**
 * Words as the full-text index (unicode61, remove_diacritics 2) sees them: lower case, accents
 * removed, split at anything but letters and digits.
 */
export function indexedWords(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{Co}]+/gu) ?? []
  );
}

/** The first `length` characters (code points, as SQLite's substr counts them). */
export function leading(text: string, length: number): string {
  return Array.from(text).slice(0, length).join("");
}

/** What a company is found by: everything that goes into its prefix lists. */
export interface SearchableCompany {
  nameKey: string;
  name: string;
  aliases: string[];
  tickers: string[];
}

/** A list a company belongs on, as `kind:prefix` (a set of them compares as strings). */
export type PrefixEntry = `${SearchPrefixKind}:${string}`;

export function searchPrefixesOf(company: SearchableCompany): Set<PrefixEntry> {
  const entries = new Set<PrefixEntry>();
  const add = (kind: SearchPrefixKind, text: string) => {
    const characters = Array.from(text);
    for (let length = 1; length <= Math.min(SHORT_PREFIX_LENGTH, characters.length); length++) {
      entries.add(`${kind}:${characters.slice(0, length).join("")}`);
    }
  };
  add("name", company.nameKey);
  const words = indexedWords([company.name, ...company.aliases, ...company.tickers].join(" "));
  for (const word of words) add("word", word);
  return entries;
}

/** A company's place in the lists before and after a write: its prefixes and its prominence. */
export interface ListedCompany {
  prefixes: Set<PrefixEntry>;
  prominence: number;
}

/**
 * The statements that move a company's list entries from `before` (null for a new company) to
 * `after`, to run in the batch that writes the company. `company` is its id, or for a new
 * company the SQL that finds it within that batch. Entries it keeps at the same prominence are
 * not touched; a changed prominence takes it off all its lists and puts it back where it now
 * ranks above the floor.
 */
export function searchPrefixUpkeep(
  db: CatalogueDb,
  company: number | SQL,
  before: ListedCompany | null,
  after: ListedCompany,
): BatchItem<"sqlite">[] {
  const same = before !== null && before.prominence === after.prominence;
  const leaving = before ? [...before.prefixes].filter((entry) => !same || !after.prefixes.has(entry)) : [];
  const joining = [...after.prefixes].filter((entry) => !same || !before.prefixes.has(entry));
  const pairs = (entries: PrefixEntry[]) =>
    JSON.stringify(entries.map((entry) => [entry.slice(0, entry.indexOf(":")), entry.slice(entry.indexOf(":") + 1)]));
  const statements: BatchItem<"sqlite">[] = [];
  if (leaving.length > 0) {
    statements.push(
      db
        .delete(searchPrefixes)
        .where(and(eq(searchPrefixes.companyId, company as number), sql`(kind, prefix) IN (SELECT value ->> 0, value ->> 1 FROM json_each(${pairs(leaving)}))`)),
    );
  }
  if (joining.length > 0) {
    const entry = sql`json_each(${pairs(joining)}) AS entry`;
    statements.push(
      db.insert(searchPrefixes).select(
        db
          .select({
            kind: sql<SearchPrefixKind>`entry.value ->> 0`.as("kind"),
            prefix: sql<string>`entry.value ->> 1`.as("prefix"),
            companyId: sql<number>`${company}`.as("company_id"),
            prominence: sql<number>`${after.prominence}`.as("prominence"),
          })
          .from(entry)
          .leftJoin(searchPrefixLists, and(eq(searchPrefixLists.kind, sql`entry.value ->> 0`), eq(searchPrefixLists.prefix, sql`entry.value ->> 1`)))
          // Ranks above the floor: better known, or as well known and older (a lower id).
          .where(
            or(
              isNull(searchPrefixLists.floorCompanyId),
              sql`(${after.prominence}, -${company}) > (${searchPrefixLists.floorProminence}, -${searchPrefixLists.floorCompanyId})`,
            ),
          ),
      ),
    );
  }
  return statements;
}
