import { domainToUnicode } from "node:url";
import { registrableName } from "../lib/domain";
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

/** The registrable label of a domain in Unicode (`xn--bcher-kva.ch` → `bücher`); the domain itself when it has none. */
export function domainLabel(domain: string): string {
  const label = registrableName(domain) ?? domain;
  return domainToUnicode(label) || label;
}

/** A domain's label as a name: words at hyphens, each capitalised (`quillstone-labs.com` → "Quillstone Labs"). */
export function domainName(domain: string): string {
  return domainLabel(domain)
    .split(/[-_.]+/)
    .filter(Boolean)
    .map((word) => {
      const [first = "", ...rest] = Array.from(word);
      return first.toLocaleUpperCase() + rest.join("");
    })
    .join(" ");
}

/**
 * The name key a discovered company is found by: its domain's name (domainName), folded. A
 * discovered company answers a name only where the name is derived from its own domain, never
 * where its site merely says it (src/catalogue/search.ts).
 */
export function domainNameKey(domain: string): string {
  return nameKey(domainName(domain));
}

/**
 * Text a stranger gave, as the service keeps and shows it: whitespace collapsed; control
 * characters and the invisible marks that reorder or hide text dropped (so that a name cannot
 * display as another); markup and markup-like characters (`<`, `>`, backquotes, braces)
 * dropped, so that no page or prompt it is pasted into gets markup; at most `max` code points,
 * a longer text cut with an ellipsis. Null when nothing is left.
 */
const INVISIBLE = /[\p{Cc}\u00AD\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\uFFF9-\uFFFB]/gu;
export const MAX_SITE_NAME = 60;
export function plainName(text: string | null | undefined, max = MAX_SITE_NAME): string | null {
  const whole = (text ?? "")
    .replace(/\s/g, " ")
    .replace(INVISIBLE, "")
    .replace(/<[^>]*>?/g, " ")
    .replace(/[<>`{}]/g, "")
    .replace(/ +/g, " ")
    .trim();
  const cut = Array.from(whole.slice(0, max * 2).toWellFormed());
  const value = (
    cut.length > max
      ? `${cut
          .slice(0, max - 1)
          .join("")
          .trimEnd()}…`
      : cut.join("")
  ).trim();
  return value === "" ? null : value;
}

/**
 * A company's name as the REST API and the MCP tools hand it out: the catalogue's as it is; a
 * discovered company's (its site's words, or its domain's) plain and short, whatever was stored
 * before names were earned. `nameSource` beside it says which it is.
 */
export function shownName(company: { companyName: string; nameSource: string; domain: string }): string {
  return company.nameSource === "catalogue" ? company.companyName : (plainName(company.companyName) ?? domainName(company.domain));
}
