import { foldText } from "./searchPrefixes";

/**
 * How the catalogue spells what it finds companies by, read and written alike: an import
 * stores these spellings, a lookup asks for them.
 */

/**
 * `name` folded for exact-name lookups, as search folds words (foldText), without the spaces:
 * "Coca-Cola" → "cocacola", "Yapı Kredi" → "yapikredi".
 */
export function nameKey(name: string): string {
  return foldText(name).replaceAll(" ", "");
}

/**
 * The spellings of a symbol that are one ticker, as lookups (findCompanyByTicker, ./companies.ts)
 * and imports read them: a share class with a dot or a dash alike (`BT.A`, `BT-A`); a numeric
 * code with its leading zeros or without (Hong Kong's `0700`, `700` and `00700` are one code):
 * its four-digit spelling, which the bundled catalogue holds, and its bare one, which an import
 * may have stored. Codes of five digits or more that are not zero-padded (Korea's `005930`,
 * Hong Kong's `09988` keep theirs) are left as they are.
 */
export function tickerSpellings(symbol: string): string[] {
  const spellings = [symbol, symbol.replaceAll(".", "-"), symbol.replaceAll("-", ".")];
  if (/^\d{1,8}$/.test(symbol)) {
    const bare = symbol.replace(/^0+(?=\d)/, "");
    if (bare.length <= 4) spellings.push(bare.padStart(4, "0"), bare);
  }
  return [...new Set(spellings)];
}
