import { importCompanyLogo } from "../catalogue/importLogo";
import { withoutVector } from "../catalogue/preparedImage";
import { DISCOVERED_PROMINENCE, DISCOVERED_SOURCE_SET } from "../catalogue/provenance";
import type { Db } from "../lib/db";
import { registrableDomain, registrableName } from "../lib/domain";
import { sha256Hex } from "../lib/encoding";
import { ok } from "../lib/errors";
import { decodeDataUrl, FetchBudget, type Fetched, fetchLimited, type ResolveMap } from "./fetcher";
import { decodeIcon, type DecodedIcon, prepareIcon } from "./image";
import { brandColour, type DeclaredIcon, type ManifestFacts, type PageFacts, readManifest, readPage } from "./page";
import { domainName } from "../catalogue/names";
import { earnedName, isStandInPage, type SiteNameSource } from "./siteName";
import { type IconFormat, sniffFormat } from "./sniff";

/**
 * Discovery: a registrable domain's own site asked for its icon, the best one ranked, and the
 * winner written into the catalogue through the importer's write path (same object layout,
 * renditions and atomic write), with its provenance (`source_set = discovered`, the icon's
 * URL, when it was fetched).
 *
 * Where the icon can be: `<link rel>` icon, shortcut icon, apple-touch-icon(-precomposed) and
 * mask-icon; the web app manifest's icons; then /favicon.ico and /apple-touch-icon.png when
 * nothing the page names is usable. Ranking: a vector first, then the largest raster,
 * square-ish marks before banners, nothing under 32 px unless nothing else exists.
 */
const PAGE = {
  maxBytes: 512 * 1024,
  timeoutMs: 4000,
  overflow: "truncate",
  accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
} as const;
const MANIFEST = {
  maxBytes: 256 * 1024,
  timeoutMs: 4000,
  overflow: "refuse",
  accept: "application/manifest+json,application/json;q=0.9,*/*;q=0.1",
} as const;
export const ICON = {
  maxBytes: 5 * 1024 * 1024,
  timeoutMs: 5000,
  overflow: "refuse",
  accept: "image/svg+xml,image/png,image/x-icon,image/*;q=0.9,*/*;q=0.1",
} as const;
/**
 * What one discovery may cost the site and the Worker, whatever the site serves: requests
 * (redirects included), body bytes (page, manifest and icons together), icons fetched at once,
 * and the candidates the page and manifest may name. Icons are asked only of the site's own
 * registrable domain and of one other host (a CDN), never of every host a page names.
 */
export const DISCOVERY_MAX_REQUESTS = 10;
export const DISCOVERY_MAX_BYTES = 6 * 1024 * 1024;
const FETCHED_PER_ROUND = 2;
const MAX_NAMED = 8;
const MIN_EDGE = 32;

export interface DiscoveryEnv {
  DB: D1Database;
  LOGOS: R2Bucket;
  IMAGES: ImagesBinding;
}

export type CandidateSource = "link icon" | "apple-touch-icon" | "mask-icon" | "manifest" | "/favicon.ico" | "/apple-touch-icon.png";

export interface CandidateReport {
  url: string;
  from: CandidateSource;
  /** Largest edge the page declares (`sizes`), "any" for a scalable icon. */
  declaredSize: number | "any" | null;
  declaredType: string | null;
  /** What the fetched bytes turned out to be. */
  format?: IconFormat;
  width?: number;
  height?: number;
  score?: number;
  /** Why the candidate was refused, or was not fetched. */
  refused?: string;
}

export interface DiscoveryReport {
  domain: string;
  outcome: "found" | "nothing";
  /** Why nothing was taken (outcome `nothing`). */
  reason?: string;
  /**
   * Set when the site did not answer as itself: no answer, a 5xx, 429 or 403, or a page that
   * stands in for it (a bot check, an error page, a parked domain). Such a miss is remembered
   * minutes, not the day a site that answered with nothing usable gets.
   */
  unanswered?: true;
  /** Set when the icon was found but could not be stored (D1 or R2 failing): a miss to try again soon. */
  storageFailed?: true;
  page: string | null;
  name: string;
  /** Whether the name is one the site gave that agrees with the domain, or the domain's own (siteName.ts). */
  nameSource: SiteNameSource;
  brandColor: string | null;
  /** Requests the discovery made (redirects included) and body bytes it read. */
  spent: { requests: number; bytes: number };
  chosen?: {
    url: string;
    format: IconFormat;
    width: number;
    height: number;
    companyId: number;
    logoId: number;
    written: "created" | "updated" | "unchanged";
  };
  candidates: CandidateReport[];
}

interface Candidate extends CandidateReport {
  decoded?: DecodedIcon;
  bytes?: Uint8Array;
  /** The icon's validators as fetched, for the scheduled re-checks' conditional requests. */
  etag?: string | null;
  lastModified?: string | null;
}

/** A refresh's discovered logo as it is stored: what a new winner must match. */
export interface CurrentLogo {
  /** Its score() as the icon it was made from. */
  score: number;
  /** Where it was fetched from (the logo row's source URL). */
  sourceUrl: string | null;
}

/**
 * The domain's site, asked and ranked, and the winner written into the catalogue. On a refresh
 * (`current`), a winner that scores below the stored logo is written only when the site no
 * longer offers the stored one (its URL no longer named, gone with 404 or 410, or serving
 * something else now); otherwise the stored logo stays, as it does when nothing is found: an
 * icon that failed for a moment (a 503, a bot check) must not hand the logo to the favicon.
 */
export async function discoverDomain(
  env: DiscoveryEnv,
  db: Db,
  domain: string,
  resolve: ResolveMap,
  now = new Date(),
  current?: CurrentLogo,
): Promise<DiscoveryReport> {
  const budget = new FetchBudget(DISCOVERY_MAX_REQUESTS, DISCOVERY_MAX_BYTES);
  const hosts = new HostRule(domain);
  const site = await readSite(domain, resolve, budget, hosts);
  const landed = site.landedUrl === null ? null : registrableDomain(new URL(site.landedUrl).hostname);
  // A home page that redirects to another registrable domain (a social profile, a domain
  // seller's page, a parent brand) is that site's page: its name is the other site's, never
  // this domain's, which is then named as a site that names nothing is. Its colour and icons
  // are the other brand's too, unless the other domain is this one's name under another suffix
  // (acme.de → acme.com): a country site sent to the company's main one, the same mark.
  const ownSite = landed === null || landed === registrableDomain(domain);
  const sameBrand = ownSite || registrableName(landed!) === registrableName(domain);
  if (sameBrand && landed !== null) hosts.own(landed);
  const brandColor = sameBrand && !site.unanswered ? (brandColour(site.manifest?.themeColor) ?? brandColour(site.page?.themeColor)) : null;
  const earned =
    ownSite && !site.unanswered
      ? earnedName(domain, {
          structuredName: site.page?.structuredName,
          siteName: site.page?.siteName,
          applicationName: site.page?.applicationName,
          manifestName: site.manifest?.name,
          manifestShortName: site.manifest?.shortName,
          title: site.page?.title,
        })
      : { name: domainName(domain), source: "domain" as const };
  const report: DiscoveryReport = {
    domain,
    outcome: "nothing",
    page: site.pageUrl,
    name: earned.name,
    nameSource: earned.source,
    brandColor,
    candidates: [],
    spent: { requests: 0, bytes: 0 },
  };
  const spent = () => (report.spent = { requests: budget.requestsMade, bytes: budget.bytesRead });
  if (!sameBrand) {
    report.reason = `the site redirects to another site (${landed})`;
    spent();
    return report;
  }
  if (site.unanswered) {
    // A site that did not answer as itself is asked again in minutes; nothing of a challenge
    // or a parking page (its icon is the parking company's) is taken meanwhile.
    report.reason = `the site did not answer (${site.unanswered})`;
    report.unanswered = true;
    spent();
    return report;
  }

  // Round one: what the page and manifest name; round two, only if that yields nothing usable
  // (nothing, or only an icon under MIN_EDGE): the well-known paths the page did not name.
  const named = candidatesOf(site);
  const origin = site.pageUrl ?? `https://${domain}/`;
  const wellKnown = (
    [
      { url: new URL("/favicon.ico", origin).href, from: "/favicon.ico", declaredSize: null, declaredType: null },
      { url: new URL("/apple-touch-icon.png", origin).href, from: "/apple-touch-icon.png", declaredSize: null, declaredType: null },
    ] satisfies Candidate[]
  ).filter((candidate) => !named.some((c) => c.url === candidate.url));
  const examined = [...named];
  const fetching: Fetching = { resolve, budget, hosts };
  let winner = await bestOf(env, named, fetching);
  if (!usable(winner)) {
    examined.push(...wellKnown);
    winner = await bestOf(env, wellKnown, fetching, winner);
  }
  report.candidates = examined.map(({ decoded: _decoded, bytes: _bytes, ...shown }) => shown);
  spent();
  if (!winner) {
    report.reason = site.pageUrl === null ? "the site did not answer" : "no usable icon";
    return report;
  }
  if (current && winner.score! < current.score && stillOffered(current.sourceUrl, site, examined)) {
    report.reason = `nothing better than the stored logo (the best found now: ${winner.url.slice(0, 200)}, ${winner.width}×${winner.height})`;
    return report;
  }

  const { decoded, bytes, format } = winner;
  // A stranger's SVG is kept only as the private original: sanitised or not, it is never served.
  const prepared = withoutVector(await prepareIcon(format!, bytes!, decoded!, { discovered: true }));
  const written = await importCompanyLogo(
    db,
    env.LOGOS,
    {
      name: report.name,
      nameSource: report.nameSource,
      domains: [domain],
      aliases: [],
      prominence: DISCOVERED_PROMINENCE,
      variant: "icon",
      sourceSet: DISCOVERED_SOURCE_SET,
      // The site's own icon; its terms are the site's.
      licence: "unknown",
      sourceHash: await sha256Hex(bytes!),
      brandColor: brandColor ?? undefined,
      provenance: {
        sourceUrl: isDataUrl(winner.url) ? `${origin} (inline data: URL)` : winner.url,
        fetchedAt: now,
        etag: winner.etag ?? null,
        lastModified: winner.lastModified ?? null,
      },
      // A page's title and theme colour name a new company; a catalogued one keeps its own.
      keepCompany: true,
    },
    async () => ok(prepared),
    now,
  );
  if (!written.ok) {
    report.reason = `catalogue write failed: ${written.error.message}`;
    report.storageFailed = true;
    return report;
  }
  report.outcome = "found";
  report.chosen = {
    url: winner.url,
    format: format!,
    width: prepared.width,
    height: prepared.height,
    companyId: written.value.companyId,
    logoId: written.value.logoId,
    written: written.value.outcome,
  };
  return report;
}

/**
 * The hosts a discovery asks for a manifest and icons: its own registrable domain (and that of
 * a same-name site its page redirected to), and the first other host it is sent to, at most:
 * a page naming a dozen hosts makes the Worker ask one of them, not a dozen.
 */
class HostRule {
  private readonly owned = new Set<string>();
  private other: string | null = null;
  constructor(domain: string) {
    this.own(domain);
  }
  own(domain: string): void {
    this.owned.add(registrableDomain(domain) ?? domain);
  }
  /** Why `url` may not be asked (the slot for another host is taken), or null. */
  readonly admits = (url: URL): string | null => {
    const host = url.hostname.toLowerCase();
    if (this.owned.has(registrableDomain(host) ?? host)) return null;
    this.other ??= host;
    return host === this.other ? null : `a third host (${host}): icons come from the site's own domain and one other host only`;
  };
}

/** How a discovery fetches: its loopback stand-ins, its budget, its host rule. */
interface Fetching {
  resolve: ResolveMap;
  budget: FetchBudget;
  hosts: HostRule;
}

interface Site {
  /**
   * The page's own URL, after redirects: where the well-known paths (/favicon.ico) are asked
   * and what the report and a data: icon's provenance name. Never its <base href>, which may
   * name any site: a base moves what the page's hrefs mean, not where the page is.
   */
  pageUrl: string | null;
  /**
   * Where asking for the page ended: its URL, or, when no page came, where the last try failed
   * (a redirect to another site whose page refuses the Worker still names that site).
   */
  landedUrl: string | null;
  /** What the page's hrefs resolve against: its <base href>, else its URL. */
  baseUrl: string | null;
  page: PageFacts | null;
  /** The manifest's URL after its redirects: what its icons resolve against, as browsers resolve them. */
  manifestUrl: string | null;
  manifest: ManifestFacts | null;
  /** Why the site did not answer as itself (no answer, a 5xx, a challenge or parking page); undefined when it did. */
  unanswered?: string;
}

/** Whether a URL is a data: URL; URL schemes are case-insensitive, so `DATA:` is one too. */
const isDataUrl = (url: string) => /^data:/i.test(url);

/**
 * Whether a failed fetch of the page means the site did not answer as itself, and why: no
 * answer, a server error, a 429, or a 403 (how bot checks refuse); a 404 or a redirect the
 * rules refuse is the site's own answer.
 */
function unansweredBy(fetched: Fetched): string | undefined {
  if (fetched.ok) return undefined;
  if (fetched.failure === "unanswered") return fetched.reason;
  if (fetched.failure === "status" && (fetched.status! >= 500 || fetched.status === 429 || fetched.status === 403)) return fetched.reason;
  return undefined;
}

async function readSite(domain: string, resolve: ResolveMap, budget: FetchBudget, hosts: HostRule): Promise<Site> {
  const first: Fetched = await fetchLimited(`https://${domain}/`, PAGE, { resolve, budget });
  const fetched = first.ok ? first : await fetchLimited(`https://www.${domain}/`, PAGE, { resolve, budget });
  if (!fetched.ok) {
    const elsewhere = [first.url, fetched.url].find(
      (url) => URL.canParse(url) && registrableDomain(new URL(url).hostname) !== registrableDomain(domain),
    );
    const unanswered = elsewhere ? undefined : (unansweredBy(fetched) ?? unansweredBy(first));
    return { pageUrl: null, landedUrl: elsewhere ?? null, baseUrl: null, page: null, manifestUrl: null, manifest: null, unanswered };
  }
  // A page the rewriter cannot read is a page that names nothing: the well-known paths remain.
  const page = await readPage(fetched.bytes, fetched.contentType).catch(() => null);
  if (!page) return { pageUrl: fetched.url, landedUrl: fetched.url, baseUrl: fetched.url, page: null, manifestUrl: null, manifest: null };
  if (fetched.headers.get("cf-mitigated") === "challenge" || isStandInPage(page.title)) {
    const unanswered = `a page standing in for the site: ${JSON.stringify((page.title ?? "challenge").slice(0, 80))}`;
    return {
      pageUrl: fetched.url,
      landedUrl: fetched.url,
      baseUrl: fetched.url,
      page: null,
      manifestUrl: null,
      manifest: null,
      unanswered,
    };
  }
  // Browsers ignore a data: or javascript: base (HTML § 4.2.3, "set the frozen base URL"), and
  // no other scheme but http(s) can resolve an icon's path: such a base leaves the page's URL.
  const declaredBase = resolveUrl(page.baseHref, fetched.url);
  const base = declaredBase && /^https?:/i.test(declaredBase) ? declaredBase : fetched.url;
  let manifestUrl = resolveUrl(page.manifestHref, base);
  let manifest: ManifestFacts | null = null;
  if (manifestUrl && !isDataUrl(manifestUrl)) {
    // The page's own domain, as the icons' host rule counts it, whatever its <base>.
    if (registrableDomain(new URL(fetched.url).hostname) === registrableDomain(domain)) hosts.own(new URL(fetched.url).hostname);
    const file = await fetchLimited(manifestUrl, MANIFEST, { resolve, budget, admits: hosts.admits });
    if (file.ok) {
      manifestUrl = file.url;
      manifest = readManifest(file.bytes);
    }
  }
  return { pageUrl: fetched.url, landedUrl: fetched.url, baseUrl: base, page, manifestUrl, manifest };
}

/** An href against its base: absolute, protocol-relative and relative URLs, and `data:`; null when unusable. */
function resolveUrl(href: string | null | undefined, base: string): string | null {
  if (!href) return null;
  if (/^data:/i.test(href.trim())) return href.trim();
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

const sourceOf = (icon: DeclaredIcon): CandidateSource => (icon.rel === "icon" ? "link icon" : icon.rel);

function candidatesOf(site: Site): Candidate[] {
  const seen = new Set<string>();
  const out: Candidate[] = [];
  const add = (icons: DeclaredIcon[], base: string | null) => {
    for (const icon of icons) {
      const url = base ? resolveUrl(icon.href, base) : null;
      if (!url || seen.has(url)) continue;
      seen.add(url);
      out.push({ url, from: sourceOf(icon), declaredSize: icon.size === Infinity ? "any" : icon.size, declaredType: icon.type });
    }
  };
  add(site.page?.icons ?? [], site.baseUrl);
  add(site.manifest?.icons ?? [], site.manifestUrl);
  return out.sort((a, b) => declaredRank(b) - declaredRank(a)).slice(0, MAX_NAMED);
}

const isVectorHint = (c: CandidateReport) =>
  c.declaredType === "image/svg+xml" || c.declaredSize === "any" || /\.svgz?(?:[?#]|$)/i.test(c.url) || /^data:image\/svg/i.test(c.url);

/** Before fetching: what the page says about a candidate (vector, then declared size). */
function declaredRank(c: CandidateReport): number {
  if (c.from === "mask-icon") return 60;
  if (isVectorHint(c)) return 100_000;
  return typeof c.declaredSize === "number" ? c.declaredSize : c.from === "apple-touch-icon" ? 180 : c.from === "manifest" ? 144 : 32;
}

/**
 * After decoding: a vector first, then the largest edge, halved for banners (more than 2:1)
 * and cut for wide-ish marks; under MIN_EDGE only when nothing else exists. A mask-icon is a
 * single-colour silhouette and counts for less than any colour icon of 64 px and up.
 */
export function score(from: CandidateSource, icon: { width: number; height: number; vector: boolean }): number {
  const short = Math.min(icon.width, icon.height);
  const ratio = Math.max(icon.width, icon.height) / Math.max(1, short);
  const shape = ratio <= 1.25 ? 1 : ratio <= 2 ? 0.6 : 0.3;
  if (from === "mask-icon") return 60 * shape;
  const base = (icon.vector ? 100_000 : 0) + short * shape;
  return icon.vector || short >= MIN_EDGE ? base : base - 1_000_000;
}

/**
 * Whether the site may still offer the icon a logo was made from, though this refresh did not
 * get it: the site did not answer at all, or the page still names it and it was not fetched or
 * failed other than as gone (404, 410). One fetched and decoded is what the site offers now.
 */
function stillOffered(sourceUrl: string | null, site: Site, examined: Candidate[]): boolean {
  if (site.pageUrl === null) return true;
  const candidate = sourceUrl === null ? undefined : examined.find((c) => c.url === sourceUrl);
  return candidate !== undefined && candidate.score === undefined && !/^status 4(?:04|10)$/.test(candidate.refused ?? "");
}

/** Whether the search can end: an icon under MIN_EDGE (a negative score) is kept only while nothing better turns up. */
const usable = (best: Candidate | null) => best !== null && best.score! >= 0;

/**
 * Fetches and decodes candidates, best declared first, until one round gives a usable icon; the
 * best so far stays in the running. Only the best keeps its bytes and pixels (up to 5 MB of file
 * and its decoded image each): the others' go as soon as they lose, so a search through every
 * round holds one round's and the best's, not all of them. Exported for its tests.
 */
export async function bestOf(
  env: DiscoveryEnv,
  candidates: Candidate[],
  fetching: Fetching | ResolveMap,
  bestSoFar: Candidate | null = null,
): Promise<Candidate | null> {
  const how: Pick<Fetching, "resolve"> & Partial<Fetching> = "resolve" in fetching ? fetching : { resolve: fetching as ResolveMap };
  let best = bestSoFar;
  for (let start = 0; start < candidates.length && !usable(best); start += FETCHED_PER_ROUND) {
    const round = candidates.slice(start, start + FETCHED_PER_ROUND);
    await Promise.all(round.map((candidate) => examine(env, candidate, how)));
    for (const candidate of round) {
      if (candidate.score !== undefined && (!best || candidate.score > best.score!)) {
        if (best) letGo(best);
        best = candidate;
      } else letGo(candidate);
    }
  }
  return best;
}

/** A candidate that lost: its report stays, its bytes and pixels go. */
function letGo(candidate: Candidate): void {
  delete candidate.bytes;
  delete candidate.decoded;
}

async function examine(env: DiscoveryEnv, candidate: Candidate, how: Pick<Fetching, "resolve"> & Partial<Fetching>): Promise<void> {
  let bytes: Uint8Array;
  if (isDataUrl(candidate.url)) {
    const inline = decodeDataUrl(candidate.url, ICON.maxBytes);
    if (!inline) return void (candidate.refused = "unreadable data: URL");
    bytes = inline.bytes;
  } else {
    const fetched = await fetchLimited(candidate.url, ICON, { resolve: how.resolve, budget: how.budget, admits: how.hosts?.admits });
    if (!fetched.ok) return void (candidate.refused = fetched.reason);
    bytes = fetched.bytes;
    candidate.etag = fetched.etag;
    candidate.lastModified = fetched.lastModified;
  }
  const format = sniffFormat(bytes);
  if (!format) return void (candidate.refused = "not an image (by its first bytes)");
  candidate.format = format;
  const decoded = await decodeIcon(env.IMAGES, bytes, format);
  if (!decoded.ok) return void (candidate.refused = decoded.error.message);
  candidate.width = decoded.value.sourceWidth;
  candidate.height = decoded.value.sourceHeight;
  candidate.score = Math.round(score(candidate.from, { ...decoded.value.pixels, vector: decoded.value.vector }) * 10) / 10;
  candidate.decoded = decoded.value;
  candidate.bytes = bytes;
}
