import { z } from "zod";
import { type Subject, subjectOfKey } from "../catalogue/resolveLogo";
import type { Result } from "../lib/errors";
import type { Density, RequestFormat } from "../images/transform";
import { densityOf, densityRule, imageParams } from "../images/params";
import { asciiBytes, isolateCache, MAP_ENTRY_BYTES, objectBytes, stringBytes } from "../lib/isolateCaches";
import { normaliseDomain } from "../lib/domain";
import { booleanParam, firstMessage, integerParam } from "../lib/params";

/**
 * What a lookup asks for, read from its URL: the options of its query (validated, remembered per
 * query string), and its subject, a domain, a ticker, an identifier, an email address's domain or
 * a name (a domain remembered per domain). Entries
 * are pure functions of their inputs and never go stale.
 */

/*
 * The isolate remembers only what is as short as real lookups are (a hotlink's URL is some
 * 100 characters, nearly every domain under 64): these caches are bounded in count, and so,
 * with their keys bounded too, in memory (some 25 MB at worst, all three full of junk). Junk
 * URLs of up to 16 KB each could otherwise fill an isolate's 128 MB. Anything longer is worked
 * out afresh each time, with the same answer. A refused query keeps only its message: a
 * validation error whole is kilobytes.
 */
export const REMEMBERED_URL_LENGTH = 512;
export const REMEMBERED_DOMAIN_LENGTH = 64;

/** Who asks, as far as the options go: a secret key may ask for larger sizes. */
export type CallerKind = "publishable" | "secret";

function optionsFor(maxSize: number) {
  return z
    .object({
      size: integerParam("size", 1, maxSize).default(128),
      greyscale: booleanParam("greyscale").default(false),
      ...imageParams,
      // What a domain without a logo gets: the spec's 404 (`none`), or a monogram; unset, the key's default.
      fallback: z.enum(["monogram", "none"], { message: "Invalid fallback: must be monogram or none" }).optional(),
    })
    .refine(...densityRule)
    .transform(({ retina, dpr, ...o }): LookupOptions => ({ ...o, dpr: densityOf({ dpr, retina }) }));
}
export interface LookupOptions {
  size: number;
  greyscale: boolean;
  theme?: "light" | "dark" | undefined;
  format: RequestFormat;
  dpr: Density;
  fallback?: "monogram" | "none" | undefined;
}
const publishableOptions = optionsFor(800);
const secretOptions = optionsFor(1200);

/*
 * A warm lookup is mostly bookkeeping, and validating the query and building the asset URL
 * (encoding the key, signing the width) were a third of it (npm run bench). Hotlinks repeat
 * the same URLs, so the isolate remembers both (the URL in redirectsFor); entries are pure
 * functions of their inputs and never go stale.
 */
const parsedQueries = isolateCache<string, ParsedQuery>({
  name: "lookup.parsedQueries",
  holds: "a lookup's query string and its options, or why they are refused, with its key as given",
  capacity: 2_500,
  // The caller's kind and the query; the options (or a refusal's message) and the token, at most the query's length.
  entryBytes:
    asciiBytes(REMEMBERED_URL_LENGTH + 9) +
    objectBytes(2) +
    objectBytes(2) +
    stringBytes(200) +
    asciiBytes(REMEMBERED_URL_LENGTH) +
    MAP_ENTRY_BYTES,
});

export type QueryOptions = { success: true; data: LookupOptions } | { success: false; message: string };

export interface ParsedQuery {
  options: QueryOptions;
  /** The publishable key of the query, as given. */
  token: string | undefined;
}

export function queryOf(kind: CallerKind, url: string, query: () => Record<string, string>): ParsedQuery {
  const search = url.indexOf("?") === -1 ? "" : url.slice(url.indexOf("?"));
  const parse = (): ParsedQuery => {
    const params = query();
    const options = (kind === "secret" ? secretOptions : publishableOptions).safeParse(params);
    return {
      options: options.success ? { success: true, data: options.data } : { success: false, message: firstMessage(options.error) },
      token: params.token,
    };
  };
  return search.length > REMEMBERED_URL_LENGTH ? parse() : parsedQueries.remember(`${kind}${search}`, parse);
}

// Normalising (IDNA, Public Suffix List) is the costliest step of a warm lookup; hotlinked
// domains repeat, so the isolate remembers its answers.
const subjects = isolateCache<string, Subject | { invalid: string }>({
  name: "lookup.subjects",
  holds: "a lookup path's domain as written, and the domain it normalises to (or the refusal)",
  capacity: 10_000,
  // A domain as written (any script), and the normalised one (ASCII, 253 characters at most).
  entryBytes: stringBytes(REMEMBERED_DOMAIN_LENGTH) + objectBytes(2) + asciiBytes(253) + MAP_ENTRY_BYTES,
});

function domainSubject(raw: string): Subject | { invalid: string } {
  const normalise = (): Subject | { invalid: string } => {
    const result = normaliseDomain(raw);
    return result.ok ? { kind: "domain", value: result.domain } : { invalid: "Invalid domain format" };
  };
  return raw.length > REMEMBERED_DOMAIN_LENGTH ? normalise() : subjects.remember(raw, normalise);
}

const TICKER = /^(?:[A-Za-z0-9]{1,12}:)?[A-Za-z0-9.&-]{1,20}$/;

/** What a lookup path asks for: a subject, or why it names none (400), or a person's address (404). */
export type AskedSubject = Subject | { invalid: string } | { personal: string };

/** The paths that name a subject by a key of its own; any other path is a domain. */
const KEYED: Record<string, (text: string) => AskedSubject> = {
  ticker: (ticker) => (TICKER.test(ticker) ? { kind: "ticker", value: ticker.toUpperCase() } : { invalid: "Invalid ticker format" }),
  isin: (text) => askedBy(subjectOfKey("isin", text)),
  crypto: (text) => askedBy(subjectOfKey("crypto", text)),
  email: (text) => askedBy(subjectOfKey("email", text)),
};

/** A key's subject, or its refusal as the route answers it: a person's address is a 404, the rest 400. */
function askedBy(subject: Result<Subject>): AskedSubject {
  if (subject.ok) return subject.value;
  return subject.error.code === "not_found" ? { personal: subject.error.message } : { invalid: subject.error.message };
}

/**
 * What a lookup path names: `/ticker/{t}`, `/isin/{isin}`, `/crypto/{symbol}`, `/email/{address}`,
 * `/name/{n}`, or a domain. Paths with more segments ("github.com/about", "/isin/X/Y") are no
 * domains or keys either: the spec's 400, not a 404.
 */
export function subjectOf(path: string): AskedSubject {
  const slash = path.indexOf("/", 1);
  const keyed = slash === -1 ? undefined : KEYED[path.slice(1, slash)];
  // A slash, another segment's or an encoded one, is in no key: each refuses it.
  if (keyed) return keyed(decodeURIComponentSafe(path.slice(slash + 1)));
  if (path.startsWith("/name/")) {
    // Another segment is no name; an encoded slash is part of one (`/name/shadcn%2Fui`).
    const segment = path.slice("/name/".length);
    const name = decodeURIComponentSafe(segment).trim();
    return name.length > 0 && name.length <= 200 && !segment.includes("/")
      ? { kind: "name", value: name }
      : { invalid: "Invalid name: 1 to 200 characters" };
  }
  return domainSubject(decodeURIComponentSafe(path.slice(1)));
}

/** Query parameters, each its first value, as the router's `c.req.query()` gives them. */
export function firstValues(search: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(search)) if (!Object.hasOwn(values, name)) values[name] = value;
  return values;
}

export function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
