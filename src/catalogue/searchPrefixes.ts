import { and, eq, isNull, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type SearchPrefixKind, searchPrefixes, searchPrefixLists } from "../../schema";
import { isolateCache, MAP_ENTRY_BYTES, stringBytes } from "../lib/isolateCaches";
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
 * shorter by one instead of leaving a gap that only a scan of the catalogue could fill; when a
 * rename leaves a list with a floor half empty, the write path fills it again if the companies
 * of its prefix are few enough to read (refills). The
 * triggers of migrations/0009 count each list and set its floor; 0009 filled the lists of the
 * companies already there from the words the full-text index holds, 0011 the word lists again
 * when domains left the index, and 0012 all of them again once the index held the words of the
 * code's fold (foldText), which are those of searchPrefixesOf.
 *
 * The write path (importCompanyLogo) keeps the lists in the same transaction as the company's
 * rows, with the statements of `searchPrefixUpkeep`.
 */
export const SEARCH_PREFIX_LIST_SIZE = 64; // also in the triggers of migrations/0009
export const SHORT_PREFIX_LENGTH = 3;

/**
 * The one fold of search, for name keys, the words of the prefix lists, the words of the
 * full-text index and the words of a query alike (foldText). Each character on its own is
 * decomposed (NFKD: "ｔ" → "t", "ﬁ" → "fi", "é" → "e" and its accent), stripped of marks
 * (accents, kana voicing marks, Indic vowel signs), lower-cased, its letters that have no
 * decomposition spelled as their base letters ("ı" → "i", "ł" → "l", "ß" → "ss"), recomposed
 * (Hangul syllables stay syllables), and everything but letters, digits and private-use
 * characters becomes a space. Final sigma becomes sigma, as a lone capital sigma lower-cases.
 *
 * One character at a time, so that the database folds the same way with a table:
 * migrations/0012 holds this fold of every code point (test/catalogue/searchFold.test.ts
 * checks it against this code), and the full-text index holds text folded with it.
 */
export function foldCharacter(character: string): string {
  if (character < "\u0080") return /[A-Za-z0-9]/.test(character) ? character.toLowerCase() : " ";
  return foldedCharacters.remember(character, () =>
    Array.from(character.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase(), (c) => SPELLED_OUT[c] ?? c)
      .join("")
      .normalize("NFC")
      .replace(/[^\p{L}\p{N}\p{Co}]/gu, " "),
  );
}

/** Letters that do not decompose, as they are written without their stroke or ligature. */
const SPELLED_OUT: Record<string, string> = {
  ı: "i",
  ø: "o",
  ł: "l",
  đ: "d",
  ð: "d",
  ħ: "h",
  ŧ: "t",
  ß: "ss",
  æ: "ae",
  œ: "oe",
  þ: "th",
  ς: "σ",
};
const foldedCharacters = isolateCache<string, string>({
  name: "catalogue.foldedCharacters",
  holds: "a character and what search folds it to",
  capacity: 4096,
  entryBytes: stringBytes(2) + stringBytes(4) + MAP_ENTRY_BYTES,
});

/**
 * Which of the scripts written without spaces between words a folded character is: Han,
 * hiragana or katakana, "either" for the kana marks of both (the long vowel mark "ー"), "other"
 * for any other letter or digit. Migrations/0012 holds it for every code point too.
 */
export type WordScript = "han" | "hiragana" | "katakana" | "either" | "other";
export function wordScript(character: string): WordScript {
  const hiragana = /\p{scx=Hira}/u.test(character);
  const katakana = /\p{scx=Kana}/u.test(character);
  if (hiragana && katakana) return "either";
  if (/\p{scx=Han}/u.test(character)) return "han";
  return hiragana ? "hiragana" : katakana ? "katakana" : "other";
}
const WRITTEN_WITHOUT_SPACES = /[\p{scx=Han}\p{scx=Hira}\p{scx=Kana}]/u;

/**
 * `text` folded (foldCharacter): its words, separated by spaces. Where a word of Han, hiragana
 * or katakana meets one of another script without a space ("日本ペイント", "NTTドコモ"), the
 * two are words of their own, as close as search can come to the words of Japanese and Chinese
 * without a dictionary: "ペイント" finds 日本ペイント.
 */
export function foldText(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text.toLowerCase().replace(/[^a-z0-9]/g, " ");
  let folded = "";
  for (const character of text) folded += foldCharacter(character);
  if (!WRITTEN_WITHOUT_SPACES.test(folded)) return folded;
  let split = "";
  let previous: WordScript | "none" = "none";
  for (const character of folded) {
    const script = character === " " ? "none" : wordScript(character);
    if (script !== "none" && script !== "either" && previous !== "none" && previous !== script) split += " ";
    split += character;
    if (script !== "either") previous = script;
  }
  return split;
}

/** The words of `text` as search compares them: the full-text index holds the same (foldText). */
export function indexedWords(text: string): string[] {
  return foldText(text)
    .split(" ")
    .filter((word) => word !== "");
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
 * not written again; a changed prominence takes it off all its lists and puts it back where it
 * now ranks above the floor.
 *
 * What leaves is every entry of the company's that `after` does not name, read by company: lists
 * built by another fold (migrations before 0012) or another version of this code may hold
 * entries `before` does not name, and those must go too. Entries join with ON CONFLICT for the
 * same reason: one already there is kept, with the company's prominence, rather than failing the
 * company's write, and every write after it.
 */
export function searchPrefixUpkeep(
  db: CatalogueDb,
  company: number | SQL,
  before: ListedCompany | null,
  after: ListedCompany,
): BatchItem<"sqlite">[] {
  const same = before !== null && before.prominence === after.prominence;
  const joining = [...after.prefixes].filter((entry) => !same || !before.prefixes.has(entry));
  const leaving = before === null ? [] : [...before.prefixes].filter((entry) => !same || !after.prefixes.has(entry));
  const pairs = (entries: PrefixEntry[]) =>
    JSON.stringify(entries.map((entry) => [entry.slice(0, entry.indexOf(":")), entry.slice(entry.indexOf(":") + 1)]));
  const statements: BatchItem<"sqlite">[] = [];
  if (before !== null) {
    const kept = same ? [...after.prefixes] : [];
    statements.push(
      db
        .delete(searchPrefixes)
        .where(
          and(
            eq(searchPrefixes.companyId, company as number),
            sql`(kind, prefix) NOT IN (SELECT value ->> 0, value ->> 1 FROM json_each(${pairs(kept)}))`,
          ),
        ),
    );
  }
  if (joining.length > 0) {
    const entry = sql`json_each(${pairs(joining)}) AS entry`;
    statements.push(
      db
        .insert(searchPrefixes)
        .select(
          db
            .select({
              kind: sql<SearchPrefixKind>`entry.value ->> 0`.as("kind"),
              prefix: sql<string>`entry.value ->> 1`.as("prefix"),
              companyId: sql<number>`${company}`.as("company_id"),
              prominence: sql<number>`${after.prominence}`.as("prominence"),
            })
            .from(entry)
            .leftJoin(
              searchPrefixLists,
              and(eq(searchPrefixLists.kind, sql`entry.value ->> 0`), eq(searchPrefixLists.prefix, sql`entry.value ->> 1`)),
            )
            // Ranks above the floor: better known, or as well known and older (a lower id).
            .where(
              or(
                isNull(searchPrefixLists.floorCompanyId),
                sql`(${after.prominence}, -${company}) > (${searchPrefixLists.floorProminence}, -${searchPrefixLists.floorCompanyId})`,
              ),
            ),
        )
        .onConflictDoUpdate({
          target: [searchPrefixes.kind, searchPrefixes.prefix, searchPrefixes.companyId],
          set: { prominence: after.prominence },
        }),
    );
  }
  if (leaving.length > 0) statements.push(...refills(db, pairs(leaving)));
  return statements;
}

/** A list with a floor is filled again once it is shorter than this, if its prefix is uncrowded. */
const SHORT_LIST_SIZE = SEARCH_PREFIX_LIST_SIZE / 2;
/** Uncrowded: at most this many names, or word instances, start with the prefix. */
const REFILL_CANDIDATES = SEARCH_PREFIX_LIST_SIZE * 8;
const LAST_CHARACTER = "\u{10FFFF}";

/**
 * The statements that fill again the lists a company left (`lists`, as JSON [kind, prefix]
 * pairs) that have a floor and are now short, from all the companies of their prefix, when those
 * are few enough to read: the names of its range of companies_name_key_idx, or the companies of
 * the full-text index's words that start with it (catalogue_search_words, which reads them in
 * term order from the prefix on). A list with a floor otherwise never grows back: a company
 * below the floor stays out of it for good, however many companies leave above it. A crowded
 * prefix, whose companies cannot all be read, keeps its short list; search reads its other
 * candidates all the same.
 *
 * Such a list is rebuilt as from nothing: its row and entries go, and every company of its
 * prefix joins, the least known first, so that the insert trigger of migrations/0009 keeps the
 * best known and makes the best it leaves out the floor.
 */
function refills(db: CatalogueDb, lists: string): BatchItem<"sqlite">[] {
  const leaving = sql`(SELECT value ->> 0, value ->> 1 FROM json_each(${lists}))`;
  const prefixCompanies = (kind: SQL, prefix: SQL, limit: number) => sql`SELECT * FROM (
    SELECT id FROM companies WHERE ${kind} = 'name' AND name_key >= ${prefix} AND name_key < ${prefix} || ${LAST_CHARACTER} LIMIT ${limit})`;
  const prefixWords = (kind: SQL, prefix: SQL, limit: number) => sql`SELECT * FROM (
    SELECT doc FROM catalogue_search_words WHERE ${kind} = 'word' AND term >= ${prefix} AND term < ${prefix} || ${LAST_CHARACTER} LIMIT ${limit})`;
  const [listKind, listPrefix] = [sql`search_prefix_lists.kind`, sql`search_prefix_lists.prefix`];
  const [kind, prefix] = [sql`entry.value ->> 0`, sql`entry.value ->> 1`];
  const rebuilt = (kindOf: SQL, prefixOf: SQL) =>
    sql`NOT EXISTS (SELECT 1 FROM search_prefix_lists l WHERE l.kind = ${kindOf} AND l.prefix = ${prefixOf})`;
  // Builders, not raw statements: drizzle batches raw statements without their parameters.
  return [
    db.delete(searchPrefixLists).where(
      sql`(kind, prefix) IN ${leaving} AND floor_company_id IS NOT NULL AND size < ${SHORT_LIST_SIZE}
          AND (SELECT count(*) FROM (${prefixCompanies(listKind, listPrefix, REFILL_CANDIDATES + 1)} UNION ALL ${prefixWords(listKind, listPrefix, REFILL_CANDIDATES + 1)})) <= ${REFILL_CANDIDATES}`,
    ),
    db
      .delete(searchPrefixes)
      .where(sql`(kind, prefix) IN ${leaving} AND ${rebuilt(sql`search_prefixes.kind`, sql`search_prefixes.prefix`)}`),
    db.insert(searchPrefixes).select(
      db
        .select({
          kind: sql<SearchPrefixKind>`${kind}`.as("kind"),
          prefix: sql<string>`${prefix}`.as("prefix"),
          companyId: sql<number>`c.id`.as("company_id"),
          prominence: sql<number>`c.prominence`.as("prominence"),
        })
        .from(sql`json_each(${lists}) AS entry`)
        .innerJoin(
          sql`companies c`,
          sql`c.id IN (${prefixCompanies(kind, prefix, REFILL_CANDIDATES)} UNION ${prefixWords(kind, prefix, REFILL_CANDIDATES)})`,
        )
        .where(rebuilt(kind, prefix))
        .orderBy(sql`c.prominence`, sql`c.id DESC`),
    ),
  ];
}
