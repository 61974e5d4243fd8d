import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nameKey } from "../../src/catalogue/names";
import { foldCharacter, foldText, indexedWords, wordScript } from "../../src/catalogue/searchPrefixes";

/**
 * Search has one fold (foldText): the code folds queries, name keys and the words of the prefix
 * lists with it, and the database folds what the full-text index holds with the table of
 * migrations/0012, made from the same code. These tests hold the two to each other.
 */
describe("foldText", () => {
  it("folds case, accents, marks, compatibility forms and letters without a decomposition", () => {
    expect(foldText("Türkiye İş Bankası")).toBe("turkiye is bankasi");
    expect(foldText("YAPI KREDİ")).toBe(foldText("Yapı Kredi"));
    expect(foldText("Łódź Ørsted Straße Æon Œuvre Đà Þór")).toBe("lodz orsted strasse aeon oeuvre da thor");
    expect(foldText("ＮＩＫＥ ﬁnance Acme™")).toBe("nike finance acmetm");
    expect(foldText("ΟΔΟΣ οδος")).toBe("οδοσ οδοσ");
    // Kana voicing marks and Indic vowel signs are marks; Hangul syllables stay syllables.
    expect(foldText("デンソー")).toBe(foldText("テンソー"));
    expect(foldText("ｶﾞｽ")).toBe("カス");
    expect(indexedWords("रिलायंस इंडस्ट्रीज")).toEqual(["रलयस", "इडसटरज"]);
    expect(indexedWords("삼성전자")).toEqual(["삼성전자"]);
    expect(nameKey("Türkiye İş Bankası")).toBe("turkiyeisbankasi");
  });

  it("splits words where Han, hiragana and katakana meet each other or another script", () => {
    expect(indexedWords("日本ペイント")).toEqual(["日本", "ヘイント"]);
    expect(indexedWords("NTTドコモ")).toEqual(["ntt", "トコモ"]);
    expect(indexedWords("らーめん カレーライス")).toEqual(["らーめん", "カレーライス"]);
    expect(indexedWords("ソニー株式会社")).toEqual(["ソニー", "株式会社"]);
    // The name key is the name's words without spaces, however they were split.
    expect(nameKey("日本ペイント")).toBe("日本ヘイント");
  });

  it("keeps private-use characters, and turns everything else that is no letter or digit into a space", () => {
    expect(indexedWords("a \uF8FF\uF8FF🙂b\u200Dc")).toEqual(["a", "\uF8FF\uF8FF", "b", "c"]);
    expect(indexedWords('Stripe "Inc" OR x*')).toEqual(["stripe", "inc", "or", "x"]);
  });
});

/**
 * The code's fold of every code point that folds to something else (surrogates aside), computed
 * once for the file: both tests below go through every code point, ~3.5 s each time.
 */
let codeFolds: Map<number, string> | undefined;
function foldsOfEveryCodePoint(): Map<number, string> {
  if (!codeFolds) {
    codeFolds = new Map();
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      const character = String.fromCodePoint(codePoint);
      const folded = foldCharacter(character);
      if (folded !== character) codeFolds.set(codePoint, folded);
    }
  }
  return codeFolds;
}

interface FoldRow {
  code_point: number;
  last_code_point: number;
  folded: string | null;
  script: string | null;
}

describe("the database's fold (migrations/0012)", () => {
  it("holds the code's fold and script of every code point", async () => {
    const rows = (await env.DB.prepare("SELECT * FROM search_folds ORDER BY code_point").all<FoldRow>()).results;
    const folds = foldsOfEveryCodePoint();
    const differences: string[] = [];
    let row = 0;
    for (let codePoint = 0; codePoint <= 0x10ffff && differences.length < 10; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      while (row < rows.length && rows[row]!.last_code_point < codePoint) row++;
      const covering = rows[row] !== undefined && rows[row]!.code_point <= codePoint ? rows[row] : undefined;
      const character = String.fromCodePoint(codePoint);
      const folded = covering?.folded ?? character;
      const script = covering?.script ?? "other";
      const expected = folds.get(codePoint) ?? character;
      const expectedScript = expected === character ? wordScript(character) : "other";
      if (folded !== expected || script !== expectedScript) {
        differences.push(
          `U+${codePoint.toString(16)}: ${JSON.stringify([folded, script])}, code ${JSON.stringify([expected, expectedScript])}`,
        );
      }
    }
    expect(differences).toEqual([]);
  }, 60_000);

  it("fills the index with the code's fold of names, aliases and tickers", async () => {
    const samples = [
      "Türkiye İş Bankası",
      "日本ペイント NTTドコモ らーめん ｶﾞｽ ヽゞ々〆",
      "रिलायंस इंडस्ट्रीज",
      "삼성전자 ᄉ ᅡ",
      "Łódź — Ørsted, Straße; ΟΔΟΣ",
      "ＮＩＫＥ ﬁnance ™ ½ ㈱ \uF8FF 🙂\u0301x",
      "Acme-Corp, Inc. (US)",
      "tab\there",
    ];
    // Any code points but NUL, at which SQLite's text functions stop.
    const arbitrary = fc
      .sample(fc.string({ unit: "binary", maxLength: 24 }), { numRuns: 300, seed: 12 })
      .map((text) => text.replaceAll("\0", ""));
    const texts = [...samples, ...arbitrary];
    await env.DB.batch(
      texts.map((text, index) =>
        env.DB.prepare(
          "INSERT INTO companies (id, name, name_key, aliases, prominence, created_at, updated_at) VALUES (?1, ?2, '', ?3, 0, 0, 0)",
        ).bind(index + 1, text, JSON.stringify([text, "Second Alias"])),
      ),
    );
    const folded = (
      await env.DB.prepare("SELECT company_id AS id, name, aliases FROM catalogue_search_source ORDER BY company_id").all<{
        id: number;
        name: string;
        aliases: string;
      }>()
    ).results;
    // Printable ASCII goes in as it is: the tokenizer's own splitting and lower-casing is its fold.
    const words = (text: string | null) => (text === null ? [] : indexedWords(text));
    for (const row of folded) {
      const text = texts[row.id - 1]!;
      expect(words(row.name), JSON.stringify(text)).toEqual(indexedWords(text));
      expect(words(row.aliases), JSON.stringify(text)).toEqual(indexedWords(`${text} Second Alias`));
      if (/[^\x20-\x7e]/.test(text)) expect(row.name).toBe(foldText(text));
    }
  });

  it("has the index split a folded text into the code's words and fold none of them further", async () => {
    // Every code point that folds to itself and is a word: the words a folded text is made of.
    const folds = foldsOfEveryCodePoint();
    const characters: string[] = [];
    for (let codePoint = 0x80; codePoint <= 0x10ffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      const character = String.fromCodePoint(codePoint);
      if (!folds.has(codePoint) && character !== " ") characters.push(character);
    }
    const documents: string[][] = [];
    for (let at = 0; at < characters.length; at += 4000) documents.push(characters.slice(at, at + 4000));
    await env.DB.batch(
      documents.map((document, index) =>
        env.DB.prepare("INSERT INTO catalogue_search (rowid, name, aliases, tickers) VALUES (?1, ?2, '', '')").bind(
          index + 1,
          document.join(" "),
        ),
      ),
    );
    const differences: string[] = [];
    for (const [index, document] of documents.entries()) {
      const terms = (
        await env.DB.prepare("SELECT term FROM catalogue_search_words WHERE doc = ?1 ORDER BY offset")
          .bind(index + 1)
          .all<{ term: string }>()
      ).results.map((row) => row.term);
      if (terms.join(" ") !== document.join(" ")) {
        differences.push(
          ...document
            .filter((character, at) => terms[at] !== character)
            .slice(0, 5)
            .map((c) => `U+${c.codePointAt(0)!.toString(16)}`),
        );
      }
    }
    expect(differences).toEqual([]);
  }, 120_000);
});
