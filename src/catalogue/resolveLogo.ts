import type { IdentifierScheme, LogoTone, LogoVariant } from "../../schema";
import type { RenditionSet } from "../images/objectKeys";
import type { Logo } from "./entities";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES, objectBytes, stringBytes } from "../lib/isolateCaches";
import { domainCacheTag } from "../lib/cacheTags";
import { cachedResponse, deleteCached, rootCause, storeResponse } from "../lib/dependencies";
import { log } from "../lib/log";
import type { CatalogueDb } from "../lib/db";
import { sourceSets } from "../licences/sources";
import { CORRECTED_SOURCE_SET, DISCOVERED_SOURCE_SET, logoSourceOf, OWNER_SOURCE_SET, type StoredLogoSource } from "./provenance";
import { findCompanyByDomain, findCompanyByTicker } from "./companies";
import type { CompanyMatch } from "./entities";
import { findCompanyByName } from "./search";
import { findCompanyByIdentifier, parseCryptoSymbol, parseIsin } from "./identifiers";
import { emailDomain, PERSONAL_ADDRESS } from "./emailAddresses";
import { fail, ok, type Result } from "../lib/errors";
import { logosOfCompany } from "./logos";
import { MINUTE_MS } from "../lib/time";
import { settleThemes } from "./themesOnDemand";

/**
 * What a lookup names: a normalised host, a ticker (`AAPL`, `NASDAQ:AAPL`), a company name, or
 * an identifier (an ISIN, a crypto symbol: ./identifiers.ts), each in its canonical form.
 */
export type Subject =
  | { kind: "domain"; value: string }
  | { kind: "ticker"; value: string }
  | { kind: "name"; value: string }
  | { kind: IdentifierScheme; value: string };

/**
 * The subject an ISIN, a crypto symbol or an email address names, as every surface reads them:
 * the canonical identifier, or the address's company domain (only the domain goes further: the
 * lookup, its caches and its logs never hold the rest). Refused with why (`invalid_argument`), or,
 * for a person's address at a free or disposable provider, `not_found` with PERSONAL_ADDRESS.
 */
export function subjectOfKey(key: IdentifierScheme | "email", text: string): Result<Subject> {
  if (key === "email") {
    const address = emailDomain(text);
    if (address.kind === "invalid") return fail("invalid_argument", address.message);
    return address.kind === "personal" ? fail("not_found", PERSONAL_ADDRESS) : ok({ kind: "domain", value: address.domain });
  }
  const parsed = key === "isin" ? parseIsin(text) : parseCryptoSymbol(text);
  return parsed.ok ? ok({ kind: key, value: parsed.value }) : parsed;
}

/** The logo a lookup serves, with everything needed to answer without reading D1 again. */
export interface ResolvedLogo {
  companyId: number;
  companyName: string;
  domain: string;
  brandColor: string | null;
  logoId: number;
  variant: LogoVariant;
  width: number;
  height: number;
  tone: LogoTone;
  contentHash: string;
  masterKey: string;
  renditions: RenditionSet;
  /** `X-Logo-Source`: imported into the catalogue, discovered on the domain's site, set by its verified owner, or the account's override. */
  source: StoredLogoSource;
  /** When a discovered logo was fetched (Unix ms); null for imported logos. */
  fetchedAt: number | null;
  /** When the image was last written or confirmed as it is (Unix ms): `X-Logo-Updated`. */
  updatedAt: number;
}

/**
 * The default logo of a company: an icon before a wordmark (a hotlinked logo is usually shown
 * small and square), then the one its verified owner set, then one an operator put right, then
 * by source set in the bundled sets' order (full-colour sets before the monochrome ones), then a
 * manifest's, and last a logo discovered on the company's own site.
 */
const sourcePreference: readonly string[] = sourceSets.map((s) => s.id);
const ranked: Record<string, number> = { [OWNER_SOURCE_SET]: -2, [CORRECTED_SOURCE_SET]: -1, [DISCOVERED_SOURCE_SET]: 90 };
export function preferredLogo(logos: Logo[], variantFirst: LogoVariant = "icon"): Logo | undefined {
  const rank = (logo: Logo) => {
    const bundled = sourcePreference.indexOf(logo.sourceSet);
    const source = ranked[logo.sourceSet] ?? (bundled === -1 ? 50 : bundled);
    return (logo.variant === variantFirst ? 0 : 100) + source;
  };
  return [...logos].sort((a, b) => rank(a) - rank(b) || a.id - b.id)[0];
}

/**
 * The logo to deliver when a caller asks for a variant: the best of that variant, or, when the
 * company has none, its best logo of the other with `fallback` set (spec: variantFallback).
 */
export function chooseLogo(logos: Logo[], variant?: LogoVariant): { logo: Logo; fallback: boolean } | null {
  const logo = preferredLogo(logos, variant);
  if (!logo) return null;
  return { logo, fallback: variant !== undefined && logo.variant !== variant };
}

/** The company a subject names, by the key it gives. */
export function findCompanyOf(db: CatalogueDb, subject: Subject): Promise<CompanyMatch | null> {
  switch (subject.kind) {
    case "domain":
      return findCompanyByDomain(db, subject.value);
    case "ticker":
      return findCompanyByTicker(db, subject.value);
    case "name":
      return findCompanyByName(db, subject.value);
    default:
      return findCompanyByIdentifier(db, { scheme: subject.kind, value: subject.value });
  }
}

async function resolveFromDb(db: CatalogueDb, subject: Subject): Promise<ResolvedLogo | null> {
  const company = await findCompanyOf(db, subject);
  if (!company) return null;
  const logo = preferredLogo(await logosOfCompany(db, company));
  if (!logo) return null;
  return {
    ...company,
    logoId: logo.id,
    variant: logo.variant,
    width: logo.width,
    height: logo.height,
    tone: logo.tone,
    contentHash: logo.contentHash,
    masterKey: logo.masterKey,
    renditions: logo.renditions,
    source: logoSourceOf(logo.sourceSet),
    fetchedAt: logo.fetchedAt?.getTime() ?? null,
    updatedAt: (logo.verifiedAt ?? logo.fetchedAt ?? logo.updatedAt).getTime(),
  };
}

/**
 * Repeat lookups must not touch D1: a resolved subject is kept in the isolate for a minute and
 * in the data centre's Cache API for five (a ticker or a name for one), misses included (for a
 * minute), so that unknown domains cannot hammer the database either. An isolate keeps what it
 * reads from the Cache API only as long as the entry has left. A change made through the
 * service (an owner's, an operator's, a refresh) purges the domain's entries: this isolate's at
 * once, every other isolate's and its data centre's within PURGE_POLL_MS (src/purge/purge.ts);
 * a ticker or name resolving to the domain lasts out its minute. A bulk import purges nothing
 * and reaches lookups within five minutes (a lookup missed before it, within one).
 */
export const RESOLVE_TTL_SECONDS = 300;
export const MISS_TTL_SECONDS = 60;
/** Tickers and names are not purged by domain (their keys do not name it): they last a minute. */
export const NAMED_TTL_SECONDS = 60;
// The version names the shape of ResolvedLogo: entries of an older shape are never read.
const CACHE_ORIGIN = "https://resolve.logo-lookup.internal/v3";

const ISOLATE_TTL_MS = MINUTE_MS;
const isolateCache = expiringIsolateCache<string, ResolvedLogo | null>({
  name: "catalogue.resolved",
  holds: "a subject (domain, ticker, name, ISIN or crypto symbol) and the logo it resolves to, or a miss",
  capacity: 20_000,
  ttlMs: ISOLATE_TTL_MS,
  maxBytes: 8 * 1024 * 1024,
  sizeOf: (key, logo) => asciiBytes(key.length) + (logo ? resolvedBytes(logo) : 8) + EXPIRING_ENTRY_BYTES + MAP_ENTRY_BYTES,
  // The domain's own subject and its subdomains', and whatever resolved to its company.
  ofDomain: (key, logo, domain) => logo?.domain === domain || namesDomain(key, domain),
});

/** Whether a cache key names `domain` or one of its subdomains (`domain/shop.acme.com` for acme.com). */
function namesDomain(key: string, domain: string): boolean {
  const named = encodeURIComponent(domain);
  return key === `domain/${named}` || (key.startsWith("domain/") && key.endsWith(`.${named}`));
}

/** What a resolved logo takes: its fields, and its strings (a company's name in any script). */
function resolvedBytes(logo: ResolvedLogo): number {
  return (
    objectBytes(16) +
    stringBytes(logo.companyName.length) +
    asciiBytes(logo.domain.length) +
    asciiBytes(logo.contentHash.length) +
    asciiBytes(logo.masterKey.length) +
    (logo.brandColor ? asciiBytes(logo.brandColor.length) : 0) +
    objectBytes(5)
  );
}

// Remembered per subject: the lookup keeps a domain's subject object for repeat lookups.
const cacheKeys = new WeakMap<Subject, string>();
function cacheKeyOf(subject: Subject): string {
  let key = cacheKeys.get(subject);
  if (key === undefined) cacheKeys.set(subject, (key = `${subject.kind}/${encodeURIComponent(subject.value.toLowerCase())}`));
  return key;
}

/** The resolution this isolate holds: the logo, null (known miss), or undefined (not held). */
export function knownResolution(subject: Subject, now = Date.now()): ResolvedLogo | null | undefined {
  return isolateCache.get(cacheKeyOf(subject), now);
}

const cacheRequest = (subject: Subject) => new Request(`${CACHE_ORIGIN}/${cacheKeyOf(subject)}`);
/** When a cached resolution expires (Unix ms): the Cache API does not say how long it has left. */
const EXPIRES_HEADER = "X-Resolution-Expires";

export async function resolveLogo(db: CatalogueDb, subject: Subject, now = Date.now()): Promise<ResolvedLogo | null> {
  const cacheKey = cacheKeyOf(subject);
  const known = isolateCache.get(cacheKey, now);
  if (known !== undefined) return known;

  const cached = await cachedResponse("resolve", cacheRequest(subject));
  // An entry of an earlier release says nothing of its end: it lasts the isolate's minute.
  const left = Number(cached?.headers.get(EXPIRES_HEADER) ?? now + ISOLATE_TTL_MS) - now;
  if (!cached || !(left > 0)) return reresolve(db, subject, now);
  const logo = (await cached.json()) as ResolvedLogo | null;
  isolateCache.set(cacheKey, logo, now, Math.min(ISOLATE_TTL_MS, left));
  return logo;
}

/** Resolves from D1, past both caches, and caches the answer: after a discovery wrote the subject's logo. */
export async function reresolve(db: CatalogueDb, subject: Subject, now = Date.now()): Promise<ResolvedLogo | null> {
  const logo = await resolveFromDb(db, subject);
  const ttl = !logo ? MISS_TTL_SECONDS : subject.kind === "domain" ? RESOLVE_TTL_SECONDS : NAMED_TTL_SECONDS;
  const domains = [...new Set([subject.kind === "domain" ? subject.value : undefined, logo?.domain].filter((d) => d !== undefined))];
  await storeResponse(
    "resolve",
    cacheRequest(subject),
    Response.json(logo, {
      headers: {
        "Cache-Control": `max-age=${ttl}`,
        [EXPIRES_HEADER]: String(now + ttl * 1000),
        // What a zone's purge by tag drops (src/purge/cdn.ts), in every data centre at once.
        ...(domains.length > 0 ? { "Cache-Tag": domains.map(domainCacheTag).join(",") } : {}),
      },
    }),
  );
  isolateCache.set(cacheKeyOf(subject), logo, now);
  return logo;
}

/**
 * The logo with its themes decided, where its row left them pending (src/catalogue/themesOnDemand.ts):
 * settled, then read again past both caches, so that every later lookup finds it settled. Storage
 * that fails meanwhile costs the lookup nothing: it serves the logo as its row says, the master.
 */
export async function withThemes(bucket: R2Bucket, db: CatalogueDb, subject: Subject, logo: ResolvedLogo): Promise<ResolvedLogo> {
  if (!logo.renditions.pending) return logo;
  try {
    if (!(await settleThemes(bucket, db, logo))) return logo;
    return (await reresolve(db, subject)) ?? logo;
  } catch (error) {
    log.error("catalogue.themes_not_decided", { logoId: logo.logoId, detail: rootCause(error) });
    return logo;
  }
}

/** Forgets this data centre's cached resolution of `domain` (its own subject; subdomains' and names' last out their TTLs). */
export async function forgetCachedResolution(domain: string): Promise<void> {
  await deleteCached("resolve", cacheRequest({ kind: "domain", value: domain }));
}
