import { domainLabel, domainName, MAX_SITE_NAME, plainName } from "../catalogue/names";
import { withoutLegalForm } from "../catalogue/search";
import { foldText } from "../catalogue/searchPrefixes";

/**
 * What a discovered company is called. A site says many things of itself, and most of what
 * it says in a `<title>` is no name: "Home", "Welcome to …", "Just a moment…", "Access denied",
 * "Index of /", "Acme | Official site". A name is earned: a candidate the site gives (JSON-LD
 * `Organization` / `WebSite` name, `og:site_name`, `application-name`, the manifest's `name` /
 * `short_name`, the title's parts, in that order) is cleaned of markup, control and bidi
 * characters and of generic words, cut short, and taken only where it agrees with the domain:
 * its registrable label, ignoring case, spaces, punctuation and legal forms, or that label as
 * a word of it ("Acme Widgets" for acme.com). Otherwise the company is named after its domain,
 * prettified (`quillstone-labs.com` → "Quillstone Labs"): a stranger's page never names a
 * company as another, nor as "Home".
 */
export type SiteNameSource = "site" | "domain";

export interface EarnedName {
  name: string;
  source: SiteNameSource;
}

/** Separators sites put between their name and the rest of a title. */
const SEPARATORS = /\s+[|\u2013\u2014\u00B7\u2022:»›/-]\s+|\s*[|\u2013\u2014\u00B7\u2022»›]\s*|:\s+/u;

/**
 * Words and phrases that are no one's name, in the major languages, folded as search folds
 * words (foldText: lower case, accents and punctuation gone). Removed wherever they stand as
 * whole words; what is left of a title's part is the candidate.
 */
const GENERIC_PHRASES = [
  // English
  "home",
  "homepage",
  "home page",
  "main page",
  "welcome to",
  "welcome",
  "official site",
  "official website",
  "official web site",
  "official page",
  "website",
  "web site",
  "login",
  "log in",
  "sign in",
  "sign up",
  "register",
  "index of",
  "untitled",
  "untitled document",
  "new page",
  "default page",
  "test page",
  "404",
  "403",
  "500",
  "502",
  "503",
  "not found",
  "page not found",
  "access denied",
  "forbidden",
  "error",
  "just a moment",
  "attention required",
  "please wait",
  "one moment please",
  "security check",
  "checking your browser",
  "coming soon",
  "under construction",
  "maintenance",
  "domain for sale",
  "this domain is for sale",
  // German
  "startseite",
  "willkommen",
  "herzlich willkommen",
  "willkommen bei",
  "offizielle website",
  "offizielle webseite",
  "anmelden",
  "anmeldung",
  // French
  "accueil",
  "page d accueil",
  "bienvenue",
  "bienvenue sur",
  "bienvenue chez",
  "site officiel",
  "connexion",
  // Spanish and Portuguese
  "inicio",
  "pagina de inicio",
  "pagina principal",
  "pagina inicial",
  "bienvenido",
  "bienvenidos",
  "bienvenido a",
  "bem vindo",
  "bem vindo a",
  "sitio oficial",
  "site oficial",
  "iniciar sesion",
  "entrar",
  // Italian
  "benvenuto",
  "benvenuti",
  "benvenuti su",
  "pagina iniziale",
  "sito ufficiale",
  "accedi",
  // Dutch
  "welkom",
  "welkom bij",
  "officiele website",
  "inloggen",
  // Polish, Swedish
  "strona glowna",
  "witamy",
  "startsida",
  "valkommen",
  // Russian
  "главная",
  "главная страница",
  "добро пожаловать",
  "официальный сайт",
  "вход",
  // Japanese, Chinese, Korean
  "ホーム",
  "トップページ",
  "トップ",
  "ようこそ",
  "公式サイト",
  "首页",
  "主页",
  "欢迎",
  "官网",
  "官方网站",
  "登录",
  "首頁",
  "官方網站",
  "홈",
  "환영합니다",
  "공식 홈페이지",
].map((phrase) => foldText(phrase).trim());

/**
 * Titles of pages that stand between a visitor and a site, rather than being the site:
 * bot checks and challenges, error pages, parked domains. A discovery that meets one has not
 * been answered (a miss remembered minutes, not a day).
 */
const NOT_THE_SITE = [
  /^just a moment/i,
  /^attention required/i,
  /^one moment,? please/i,
  /^please wait/i,
  /checking (?:your|if the site connection is secure)/i,
  /^(?:access|request) (?:denied|blocked)/i,
  /^(?:40[0-9]|5\d\d)\b/,
  /\b(?:forbidden|bad gateway|service (?:temporarily )?unavailable|gateway time-?out|internal server error|too many requests)\b/i,
  /^(?:security check|captcha|are you a (?:human|robot)|ddos-guard|human verification)/i,
  /\b(?:is|domain) (?:for sale|parked)\b/i,
  /\bbuy this domain\b/i,
  /\bparked (?:free|domain)\b/i,
  /^(?:domain|website) (?:expired|suspended)/i,
  /^account suspended/i,
];

/** Whether a page's title says it is a challenge, an error or a parked domain rather than the site. */
export function isStandInPage(title: string | null): boolean {
  return title !== null && NOT_THE_SITE.some((pattern) => pattern.test(title.trim()));
}

/** Text a site gives, plain and short (plainName): no markup, control or bidi characters. */
export const plainSiteText = (text: string | null | undefined, max = MAX_SITE_NAME) => plainName(text, max);

/** A title's parts, as sites join their name with the rest ("Acme | Home", "Welcome – Acme"). */
export function titleParts(title: string): string[] {
  return title.split(SEPARATORS).map((part) => part.trim());
}

/** A candidate without the generic words in it, or null when nothing of it is left. */
export function withoutGenericWords(candidate: string): string | null {
  let words = candidate.split(/\s+/).filter(Boolean);
  // Longest phrases first, each where its folded words stand in a row.
  for (const phrase of [...GENERIC_PHRASES].sort((a, b) => b.length - a.length)) {
    const phraseWords = phrase.split(" ");
    const folded = words.map((word) => foldText(word).trim());
    for (let i = 0; i + phraseWords.length <= words.length; ) {
      if (phraseWords.every((w, j) => folded[i + j] === w)) {
        words.splice(i, phraseWords.length);
        folded.splice(i, phraseWords.length);
      } else i++;
    }
  }
  // What the phrases leave at the ends: "to", "at", dangling punctuation.
  words = words.filter((word) => foldText(word).trim() !== "");
  while (words.length > 0 && LEFT_AT_ENDS.has(foldText(words[0]!).trim())) words.shift();
  while (words.length > 0 && LEFT_AT_ENDS.has(foldText(words.at(-1)!).trim())) words.pop();
  const left = words.join(" ").trim();
  return left === "" ? null : left;
}
const LEFT_AT_ENDS = new Set(["to", "at", "the", "and", "of", "on", "for", "zu", "bei", "a", "de", "du", "la", "le", "su", "sur", "van"]);

const foldedWords = (text: string) => foldText(text).split(" ").filter(Boolean);

/**
 * Whether a candidate agrees with the domain: the same letters and digits as its label once
 * case, spaces, punctuation and a legal form are set aside ("Quillstone Labs, Inc." for
 * quillstonelabs.com), or the label's words standing in a row among its words ("Acme Widgets"
 * for acme.com, "The Acme Store" for acme.shop).
 */
export function agreesWithDomain(candidate: string, domain: string): boolean {
  const label = foldedWords(domainLabel(domain));
  if (label.length === 0) return false;
  const joinedLabel = label.join("");
  for (const spelling of [candidate, ...withoutLegalForm(candidate)]) {
    const words = foldedWords(spelling);
    if (words.join("") === joinedLabel) return true;
    for (let i = 0; i + label.length <= words.length; i++) if (label.every((w, j) => words[i + j] === w)) return true;
  }
  return false;
}

/** The candidates a site gives, best first; nulls skipped. */
export interface SiteSays {
  structuredName?: string | null | undefined;
  siteName?: string | null | undefined;
  applicationName?: string | null | undefined;
  manifestName?: string | null | undefined;
  manifestShortName?: string | null | undefined;
  title?: string | null | undefined;
}

/** The name a discovered company gets: the first candidate that agrees with the domain, else the domain's. */
export function earnedName(domain: string, says: SiteSays): EarnedName {
  const candidates = [says.structuredName, says.siteName, says.applicationName, says.manifestName, says.manifestShortName];
  const title = plainSiteText(says.title, 400);
  const ordered = [...candidates.map((c) => plainSiteText(c, 400)), ...(title && !isStandInPage(title) ? titleParts(title) : [])];
  for (const raw of ordered) {
    if (!raw) continue;
    const cleaned = withoutGenericWords(raw);
    const name = plainSiteText(cleaned);
    if (name && agreesWithDomain(name, domain)) return { name, source: "site" };
  }
  return { name: domainName(domain), source: "domain" };
}
