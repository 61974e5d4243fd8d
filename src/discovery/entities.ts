/**
 * HTML character references in the text a page gives (attribute values, its <title>), decoded
 * as browsers decode them: the runtime's HTMLRewriter hands both over as written, so
 * `content="Ben &amp; Jerry&#39;s"` would otherwise be a company's name, and
 * `href="/i.png?v=1&amp;s=2"` the URL asked for.
 *
 * Numeric references in full (decimal and hex, the `;` optional, as in HTML). Named ones from
 * a short table, not the HTML standard's 2,000-odd names: no decoder is among the project's
 * dependencies, and names and URLs use few. The table holds HTML 4's Latin-1 and "special"
 * sets (accented letters, ©, ®, ·, typographic quotes and dashes, €, Œ, Š) and a few of its
 * symbols (™, •, …); a name outside it is left as written. A named reference is read only
 * with its `;`: browsers read a few old names without one, but not in a URL's query
 * (`?a=1&copy=2`), where a mistake would change the URL asked for.
 */

/** HTML 3.2's Latin-1 names, U+00A0 to U+00FF in order. */
const LATIN_1 =
  "nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest " +
  "Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig " +
  "agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml";

const NAMED: ReadonlyMap<string, string> = new Map([
  ...LATIN_1.split(" ").map((name, i): [string, string] => [name, String.fromCharCode(0xa0 + i)]),
  ...Object.entries({
    amp: 0x26,
    AMP: 0x26,
    lt: 0x3c,
    LT: 0x3c,
    gt: 0x3e,
    GT: 0x3e,
    quot: 0x22,
    QUOT: 0x22,
    apos: 0x27,
    COPY: 0xa9,
    REG: 0xae,
    OElig: 0x152,
    oelig: 0x153,
    Scaron: 0x160,
    scaron: 0x161,
    Yuml: 0x178,
    fnof: 0x192,
    circ: 0x2c6,
    tilde: 0x2dc,
    ensp: 0x2002,
    emsp: 0x2003,
    thinsp: 0x2009,
    zwnj: 0x200c,
    zwj: 0x200d,
    lrm: 0x200e,
    rlm: 0x200f,
    ndash: 0x2013,
    mdash: 0x2014,
    lsquo: 0x2018,
    rsquo: 0x2019,
    sbquo: 0x201a,
    ldquo: 0x201c,
    rdquo: 0x201d,
    bdquo: 0x201e,
    dagger: 0x2020,
    Dagger: 0x2021,
    bull: 0x2022,
    hellip: 0x2026,
    permil: 0x2030,
    prime: 0x2032,
    Prime: 0x2033,
    lsaquo: 0x2039,
    rsaquo: 0x203a,
    euro: 0x20ac,
    trade: 0x2122,
    TRADE: 0x2122,
  }).map(([name, code]): [string, string] => [name, String.fromCharCode(code)]),
]);

const WINDOWS_1252 = new TextDecoder("windows-1252");

/**
 * A numeric reference's character (HTML § 13.2.5.80, numeric character reference end state):
 * U+FFFD for NUL, a surrogate or anything past U+10FFFF, none of which a string may hold as
 * text; 0x80–0x9F as windows-1252 reads those bytes (`&#150;` is "–"), as old pages meant them.
 */
function numeric(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\ufffd";
  if (code >= 0x80 && code <= 0x9f) return WINDOWS_1252.decode(Uint8Array.of(code));
  return String.fromCodePoint(code);
}

export function decodeCharacterReferences(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(
    /&(?:#[xX]([0-9a-fA-F]+);?|#(\d+);?|([A-Za-z][A-Za-z0-9]*);)/g,
    (whole, hex?: string, decimal?: string, name?: string) => {
      if (hex !== undefined) return numeric(parseInt(hex, 16));
      if (decimal !== undefined) return numeric(parseInt(decimal, 10));
      return NAMED.get(name!) ?? whole;
    },
  );
}
