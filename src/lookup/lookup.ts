import { type Context, Hono } from "hono";
import { z } from "zod";
import { type AppEnv, checkedVars, type readVars } from "../env";
import { encodeAssetKey } from "../assets/codec";
import { knownResolution, reresolve, resolveLogo, type ResolvedLogo, type Subject } from "../catalogue/resolveLogo";
import { nameKey } from "../catalogue/importLogo";
import { namesGrey } from "../catalogue/queries";
import { discoverOnMiss, type MissAnswer, refreshIfStale } from "../discovery/onMiss";
import { MONOGRAM_HEADERS, monogramSvg } from "../fallback/monogram";
import { greyKeyParts, lookKey, vectorKey } from "../images/keys";
import { type Density, densityWidth, MIME_TYPES, renderImage, type RequestFormat, scaledHeight, withinHeight } from "../images/transform";
import { densityOf, densityRule, imageParams } from "../assets/imageParams";
import { SVG_HEADERS } from "../assets/svgPolicy";
import { ladderUp } from "../assets/widths";
import { signAssetUrlPermanently } from "../assets/signedUrls";
import { carriesSecretKey, keyTypeOf, SECRET_KEY_IN_URL } from "../keys/format";
import { ANY_ORIGIN_CORS, checkRestrictions } from "../keys/restrictions";
import { noteKeyUse } from "../keys/lastUsed";
import { unknownKeysRefusal, verifyAskedKey } from "../keys/unknownKeys";
import { knownKey, type VerifiedKey } from "../keys/verify";
import { BoundedCache } from "../lib/boundedCache";
import { createDb } from "../lib/db";
import { dependency } from "../lib/dependencies";
import { normaliseDomain } from "../lib/domain";
import { booleanParam, firstMessage, integerParam } from "../lib/params";
import { bearerToken, plainText, rateLimitHeaders, retryAfter } from "../lib/responses";
import { consumeLookup, spendLease } from "../limits/lookupLimits";
import type { LimitDecision } from "../limits/rateLimiter";

/**
 * The domain lookup (spec section 1): GET /{domain}?token=pk_…&size=&greyscale=&theme=, with
 * `format` (png, webp, avif, jpg, svg) and `dpr` (1–3, or `retina=true` for 2), and the same
 * by ticker (/ticker/{ticker}) and by name (/name/{name}).
 *
 * Order of checks, each answering with the spec's status and plain-text message:
 * key (401) → origin and attribution (403) → parameters (400) → limits (429) → logo (404).
 * Every request with a valid key counts against its limits, found or not.
 *
 * With a secret key in `Authorization: Bearer sk_…` (the server SDK) the same routes answer
 * with bytes, up to 1,200 px, and the logo's metadata in headers.
 */
const LOOKUP_CACHE = "public, max-age=86400";

const INVALID_TOKEN = "Missing or invalid token";
const ANY_ORIGIN = { "Access-Control-Allow-Origin": "*" };

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
interface LookupOptions {
  size: number;
  greyscale: boolean;
  theme?: "light" | "dark" | undefined;
  format: RequestFormat;
  dpr: Density;
  fallback?: "monogram" | "none" | undefined;
}
const publishableOptions = optionsFor(800);
const secretOptions = optionsFor(1200);

/** `cors`: the headers every answer to this caller carries because of who it is (CORS, Vary). */
type Caller = { kind: "publishable" | "secret"; cors: Record<string, string>; key: VerifiedKey };

/**
 * A secret key's answers are public (spec: `Cache-Control: public`), which lets a shared cache
 * keep an answer to a request with credentials: it must key it on them, or it would hand the
 * image and the key's headers to a request without any.
 */
const SECRET_CALLER = { Vary: "Authorization" };

/** Who is asking: a publishable key from the query, or a secret key from the Authorization header. */
async function identify(c: Context<AppEnv>): Promise<Identified> {
  const db = createDb(c.env.DB);
  const token = c.req.query("token");
  const authorization = c.req.header("authorization");
  const bearer = bearerToken(authorization);

  // A secret key anywhere in a URL is refused outright (and, like every key, never logged).
  if (carriesSecretKey(c.req.url)) return { ok: false, response: plainText(SECRET_KEY_IN_URL, 401, ANY_ORIGIN) };

  // A page's own bearer (an app's session token that a fetch wrapper adds to every request, a
  // gateway's) is not ours to judge when the URL carries the publishable key: only a bearer
  // shaped like a secret key, or one standing alone, is the credential.
  const asked = (presented: string) => verifyAskedKey(db, c.env, c.req.raw, presented, (work) => c.executionCtx.waitUntil(work));
  if (bearer !== undefined && (keyTypeOf(bearer) === "secret" || token === undefined)) {
    const key = keyTypeOf(bearer) === "secret" ? await asked(bearer) : null;
    if (key === "refused") return { ok: false, response: unknownKeysRefused() };
    if (!key) return { ok: false, response: plainText(INVALID_TOKEN, 401, { "WWW-Authenticate": "Bearer", ...ANY_ORIGIN }) };
    return { ok: true, caller: { kind: "secret", key, cors: SECRET_CALLER } };
  }

  const key = token !== undefined && keyTypeOf(token) === "publishable" ? await asked(token) : null;
  if (key === "refused") return { ok: false, response: unknownKeysRefused() };
  return publishableCaller(c.req.raw.headers, key);
}

/** An address past the limit on unknown keys (src/keys/unknownKeys.ts): the spec's 429, readable by a page's script as a 401 is. */
const unknownKeysRefused = () => plainText("Rate limit exceeded", 429, { ...unknownKeysRefusal(), ...ANY_ORIGIN });

type Identified = { ok: true; caller: Caller } | { ok: false; response: Response };

function publishableCaller(headers: Headers, key: Caller["key"] | null): Identified {
  if (!key) return { ok: false, response: plainText(INVALID_TOKEN, 401, ANY_ORIGIN) };
  const restriction = checkRestrictions(key, headers);
  if (!restriction.ok) return { ok: false, response: plainText(restriction.message, 403, restriction.headers) };
  return { ok: true, caller: { kind: "publishable", key, cors: restriction.cors } };
}

/**
 * A warm lookup, answered before the router without a single await when the isolate already
 * knows the key and the subject and holds a lease: most hotlink traffic (src/index.ts asks it
 * first). Anything else, undefined: the request takes the full path through the router, which
 * answers it the same way. Read from the raw request, its URL parsed once (warmAsk): a warm
 * redirect costs little more than a trivial Worker's, and routing and a Hono context were most
 * of what it cost.
 */
export function warmLookup(request: Request, env: Env, ctx: ExecutionContext): Response | undefined {
  if (request.method !== "GET") return undefined;
  // Only a lookup URL reads the configuration here: the router answers anything else, and
  // invalid vars too (the lookup refuses them, /health names them).
  const asked = warmAsk(request.url);
  if (!asked) return undefined;
  const vars = checkedVars(env);
  if (!vars.ok || vars.value.LOOKUP_RESPONSE !== "redirect" || request.headers.has("authorization")) return undefined;
  const now = Date.now();
  const key = knownKey(asked.token, now);
  if (key?.type !== "publishable") return undefined;
  const logo = knownResolution(asked.subject, now);
  if (!logo) return undefined;
  const identified = publishableCaller(request.headers, key);
  if (!identified.ok) return identified.response;
  const decision = spendLease(key, now);
  if (!decision) return undefined;
  refreshIfStale(env, logo, (work) => ctx.waitUntil(work), now);
  return redirectResponse(env, vars.value, logo, asked.options, identified.caller.cors, decision);
}

/** What a lookup URL asks for, when the warm path may answer it: a publishable key, a subject and valid options. */
interface WarmAsk {
  token: string;
  subject: Subject;
  options: LookupOptions;
}

// Parsed once per URL: hotlinks repeat the very same URL, and parsing it (query, options,
// subject) was a fifth of what a warm lookup cost in its isolate (measured with npm run bench).
// What a URL asks depends on nothing else, so an entry never goes stale; null is a URL the
// router must answer.
const warmAsks = new BoundedCache<string, WarmAsk | null>(10_000);

function warmAsk(url: string): WarmAsk | null {
  const remembered = url.length <= REMEMBERED_URL_LENGTH;
  let asked = remembered ? warmAsks.get(url) : undefined;
  if (asked !== undefined) return asked;
  // The asset a local redirect leads to, each redirect's next request, is left to the router
  // and never kept here, where it would crowd the lookups out (a query with "/assets/" in it
  // goes there too, and is answered the same way). Asked only of URLs not kept, so a warm
  // lookup never pays for it.
  if (url.includes("/assets/")) return null;
  asked = parseWarmAsk(url);
  if (remembered) warmAsks.set(url, asked);
  return asked;
}

function parseWarmAsk(url: string): WarmAsk | null {
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const queryStart = url.indexOf("?", pathStart);
  if (pathStart === -1 || queryStart === -1) return null;
  // Escaped paths (IDN hosts, odd characters) are decoded by the router; they take its path.
  const escaped = url.indexOf("%", pathStart);
  if (escaped !== -1 && escaped < queryStart) return null;
  const query = queryOf("publishable", url, () => firstValues(url.slice(queryStart)));
  if (query.token === undefined || !query.options.success || carriesSecretKey(url)) return null;
  const subject = subjectOf(url.slice(pathStart, queryStart));
  if ("invalid" in subject) return null;
  return { token: query.token, subject, options: query.options.data };
}

function redirectResponse(
  env: Env,
  vars: ReturnType<typeof readVars>,
  logo: ResolvedLogo,
  options: LookupOptions,
  cors: Record<string, string>,
  limits: LimitDecision,
): Response {
  // Never an address taken from the request's Host: this answer is cached publicly, and a
  // forged Host would poison it. Without a configured base the Location is relative.
  const base = vars.PUBLIC_BASE_URL;
  const secret = env.SIGNED_URL_SECRET;
  let forLogo = redirectsFor.get(options);
  if (!forLogo) redirectsFor.set(options, (forLogo = new WeakMap()));
  let redirect = forLogo.get(logo);
  if (!redirect || redirect.base !== base || redirect.vars !== vars || redirect.secret !== secret) {
    const served = servedAs(logo, options);
    redirect = { base, vars, secret, location: redirectTarget({ cdn: vars.CDN_URL, base, secret }, served), fallback: served.fallback };
    forLogo.set(logo, redirect);
  }
  // A restricted key's CORS names the page asking: its answer is built whole, as one header object.
  if (cors !== ANY_ORIGIN_CORS) return wholeRedirect(logo, redirect, cors, limits);
  // Any other answer of this redirect in this minute differs only in the remaining count, so it
  // is a copy of the minute's template with that one header set: workerd copies a Response's
  // headers for less than it reads a header object's (a quarter of a warm lookup's CPU inside
  // one isolate, measured with npm run bench).
  let template = redirect.template;
  if (!template || template.resetAt !== limits.resetAt)
    redirect.template = template = { resetAt: limits.resetAt, response: wholeRedirect(logo, redirect, cors, limits) };
  const response = new Response(null, template.response);
  response.headers.set("X-RateLimit-Remaining", String(limits.remaining));
  return response;
}

function wholeRedirect(logo: ResolvedLogo, redirect: Redirect, cors: Record<string, string>, limits: LimitDecision): Response {
  return new Response(null, {
    status: 302,
    headers: {
      Location: redirect.location,
      "Cache-Control": LOOKUP_CACHE,
      "X-Logo-Source": logo.source,
      ...cors,
      ...rateLimitHeaders(limits),
      ...redirect.fallback,
    },
  });
}

/**
 * Warm redirects' answers, by the parsed options (remembered per query string) and the
 * resolution (remembered per subject) they were built for, so a warm lookup neither builds
 * nor hashes a string to find its Location. Both keys are the isolate's own objects, so the
 * entries go when those are dropped.
 */
const redirectsFor = new WeakMap<LookupOptions, WeakMap<ResolvedLogo, Redirect>>();

interface Redirect {
  base: string;
  vars: ReturnType<typeof readVars>;
  secret: string | undefined;
  location: string;
  fallback: Record<string, string>;
  /** The answer to an unrestricted key in the minute ending at `resetAt`, but for its remaining count. */
  template?: { resetAt: number; response: Response };
}

/** What a lookup serves: which stored object, in which format, how wide, for which page. */
interface Served {
  key: string;
  format: RequestFormat;
  width: number;
  page: "light" | "dark";
  /** Set when the asked format could not be served: says what was served instead. */
  fallback: Record<string, string>;
}

function servedAs(logo: ResolvedLogo, options: LookupOptions): Served {
  const key = lookKey(logo, options);
  const page = options.theme ?? "light";
  const width = withinHeight(densityWidth(options.size, options.dpr, logo.width), logo.width, logo.height);
  if (options.format !== "svg") return { key, format: options.format, width, page, fallback: {} };
  // The vector original is the logo as it is: served only for a look its master serves, and
  // only when the original is a vector that sanitised cleanly and is ours to serve (never a
  // discovered site's markup, whatever an older discovery stored).
  if (logo.renditions.vector && logo.source !== "discovered" && key === logo.masterKey)
    return { key: vectorKey(logo.masterKey, logo.renditions.version), format: "svg", width, page, fallback: {} };
  return { key, format: "png", width, page, fallback: { "X-Logo-Format": "png" } };
}

// A page's script reads only the headers CORS exposes: the spec's limits on a lookup answered
// here (bytes, a miss, a refusal). A redirect's own headers never reach a script, which sees
// the answer the redirect leads to; the warm redirect leaves this out.
const EXPOSED_LIMITS = { "Access-Control-Expose-Headers": "X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After" };

async function lookup(c: Context<AppEnv>): Promise<Response> {
  // Vars that do not validate would fail the lookup halfway (after counting it): it is refused
  // first, in plain text a page can read (CORS), what is wrong only in the logs.
  const vars = checkedVars(c.env);
  if (!vars.ok) {
    console.error(`lookup: ${vars.error.message}`);
    return plainText("Service misconfigured", 500, ANY_ORIGIN);
  }
  const identified = await identify(c);
  if (!identified.ok) return identified.response;
  const { caller } = identified;

  const parsed = queryOf(caller.kind, c.req.url, () => c.req.query()).options;
  if (!parsed.success) return plainText(parsed.message, 400, caller.cors);
  // Worked out (and remembered) only for a caller with a key, never for anyone's junk.
  const subject = subjectOf(c.req.path);
  if ("invalid" in subject) return plainText(subject.invalid, 400, caller.cors);

  const now = Date.now();
  const defer = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const decision = await consumeLookup(c.env, caller.key, { now, defer });
  const limitHeaders = caller.kind === "publishable" ? { ...rateLimitHeaders(decision), ...EXPOSED_LIMITS } : rateLimitHeaders(decision);
  if (!decision.allowed) {
    return plainText("Rate limit exceeded", 429, { ...caller.cors, ...limitHeaders, "Retry-After": retryAfter(decision.resetAt, now) });
  }
  const db = createDb(c.env.DB);
  noteKeyUse(db, caller.key.id, defer, now);

  let logo = await resolveLogo(db, subject, now);
  let miss: MissAnswer | null = null;
  if (!logo && subject.kind === "domain") {
    miss = await discoverOnMiss(c.env, subject.value, caller.key, now);
    if (miss.found) logo = await reresolve(db, subject);
  }
  if (!logo) {
    const fallback = parsed.data.fallback ?? caller.key.fallback ?? "none";
    if (fallback === "monogram") return monogramResponse(c, caller, subject, parsed.data, miss, limitHeaders);
    return plainText("Logo not found", 404, { ...caller.cors, ...limitHeaders });
  }
  refreshIfStale(c.env, logo, (work) => c.executionCtx.waitUntil(work), now);

  if (caller.kind === "publishable" && vars.value.LOOKUP_RESPONSE === "redirect") {
    return redirectResponse(c.env, vars.value, logo, parsed.data, caller.cors, decision);
  }
  const served = servedAs(logo, parsed.data);

  const headers = new Headers({ "Cache-Control": LOOKUP_CACHE, ...caller.cors, ...limitHeaders, ...served.fallback });
  headers.set("Content-Type", MIME_TYPES[served.format]);
  if (served.format === "svg") for (const [name, value] of Object.entries(SVG_HEADERS)) headers.set(name, value);
  headers.set("X-Logo-Source", logo.source);
  if (caller.kind === "secret") {
    for (const [name, value] of Object.entries(metadataHeaders(logo, served.width))) headers.set(name, value);
  }
  // A HEAD says what a GET would send without making it, but for an AVIF, which Cloudflare may
  // make as WebP or JPEG instead (transform.ts): only the image made says which.
  if (c.req.method === "HEAD" && served.format !== "avif") return new Response(null, { status: 200, headers });
  const image =
    served.format === "svg"
      ? await dependency(
          "object storage",
          c.env.LOGOS.get(served.key).then(async (object) => object && { bytes: await object.arrayBuffer(), contentType: MIME_TYPES.svg }),
        )
      : await renderImage(
          c.env,
          served.key,
          { width: served.width, format: served.format, page: served.page },
          (work) => c.executionCtx.waitUntil(work),
          (key) => namesGrey(db, key),
        );
  if (!image) {
    console.error(`lookup: object missing for logo ${logo.logoId}`);
    return plainText("Logo not found", 404, { ...caller.cors, ...limitHeaders });
  }
  // The type as made: an AVIF Cloudflare could not make comes as WebP or JPEG (transform.ts).
  headers.set("Content-Type", image.contentType);
  headers.set("Content-Length", String(image.bytes.byteLength));
  return new Response(c.req.method === "HEAD" ? null : image.bytes, { status: 200, headers });
}

/**
 * A miss answered with a monogram (`fallback=monogram`, or the key's default): the letter of
 * the name the site gave itself when discovery looked at it, else of the domain. Cached for
 * less than a logo, and never past the moment discovery may ask the site again: an hour at
 * most, as long as the miss is remembered when that is shorter (ten minutes after a failed
 * discovery), a minute while it is under way or could not be asked. Redirect or bytes alike,
 * the monogram is the answer itself: there is no object to redirect to.
 */
const MONOGRAM_MAX_AGE_S = 3600;
const MONOGRAM_MIN_AGE_S = 60;

function monogramResponse(
  c: Context<AppEnv>,
  caller: Caller,
  subject: Subject,
  options: LookupOptions,
  miss: MissAnswer | null,
  limitHeaders: Record<string, string>,
): Response {
  const site = miss && !miss.found ? miss.site : null;
  // A domain letters the site's own name or itself; a ticker its symbol (an exchange is no part
  // of the company's name), a name itself. Each is coloured by what finds the same company
  // however it is written: `NYSE:ACME` and `acme` alike, `/name/Acme` and `/name/ACME` alike.
  const symbol = subject.kind === "ticker" ? subject.value.slice(subject.value.lastIndexOf(":") + 1).toUpperCase() : "";
  const name = subject.kind === "domain" ? (site?.name ?? null) : subject.kind === "ticker" ? symbol : subject.value;
  const seed = subject.kind === "domain" ? subject.value : subject.kind === "ticker" ? symbol : nameKey(subject.value);
  const svg = monogramSvg({
    domain: seed,
    name,
    brandColor: site?.brandColor ?? null,
    size: options.size,
    theme: options.theme,
    greyscale: options.greyscale,
  });
  const retryAt = miss && !miss.found ? miss.retryAt : null;
  const untilRetry = retryAt === null ? MONOGRAM_MAX_AGE_S : Math.floor((retryAt - Date.now()) / 1000);
  const maxAge = Math.max(MONOGRAM_MIN_AGE_S, Math.min(MONOGRAM_MAX_AGE_S, untilRetry));
  const headers: Record<string, string> = {
    ...MONOGRAM_HEADERS,
    "Cache-Control": `public, max-age=${maxAge}`,
    "X-Logo-Source": "monogram",
    ...caller.cors,
    ...limitHeaders,
  };
  if (caller.kind === "secret") {
    Object.assign(headers, {
      ...(subject.kind === "domain" ? { "X-Logo-Domain": subject.value } : {}),
      "X-Company-Name": headerName(name ?? ""),
      "X-Logo-Width": String(options.size),
      "X-Logo-Height": String(options.size),
    });
  }
  const body = new TextEncoder().encode(svg);
  headers["Content-Length"] = String(body.byteLength);
  return new Response(c.req.method === "HEAD" ? null : body, { status: 200, headers });
}

/**
 * Where a redirect points: the CDN's image-resizing path over the R2 object when a CDN is
 * configured, otherwise this Worker's own asset route, which resizes and converts through the
 * Images binding, so that following the redirect locally yields the real image. The asset
 * route rounds unsigned widths to its ladder; the lookup signs a width between its rungs. A vector is
 * always served by the asset route, which adds the policy that forbids scripts, and so is a
 * greyscale rendition, which may not be made yet (src/images/greyOnDemand.ts): the CDN serves
 * only what the bucket holds.
 */
export function redirectTarget(to: { cdn: string; base: string; secret: string | undefined }, served: Omit<Served, "fallback">): string {
  if (served.format === "svg") return `${to.base}/assets/${encodeAssetKey(served.key)}`;
  const jpg = served.format === "jpg";
  if (to.cdn && !greyKeyParts(served.key)) {
    const options = `width=${served.width},fit=contain,format=${jpg ? "jpeg" : served.format}${jpg ? `,background=${served.page === "dark" ? "%23121212" : "white"}` : ""}`;
    return `${to.cdn}/cdn-cgi/image/${options}/${served.key}`;
  }
  // A width on the asset route's ladder (the default 128 among them) is served as asked to
  // anyone, so only a width between its rungs needs this Worker's signature: the rest redirect
  // to an unsigned URL, 54 bytes shorter, that the asset route checks no signature for.
  const signer = ladderUp(served.width) !== served.width ? to.secret : undefined;
  const query = `width=${signer ? served.width : ladderUp(served.width)}${served.format === "png" ? "" : `&format=${served.format}`}${jpg && served.page === "dark" ? "&theme=dark" : ""}`;
  const url = `${to.base}/assets/${encodeAssetKey(served.key)}?${query}`;
  return signer ? signAssetUrlPermanently(signer, url) : url;
}

/*
 * A warm lookup is mostly bookkeeping, and validating the query and building the asset URL
 * (encoding the key, signing the width) were a third of it (npm run bench). Hotlinks repeat
 * the same URLs, so the isolate remembers both (the URL in redirectsFor); entries are pure
 * functions of their inputs and never go stale.
 */
const MEMO_SIZE = 10_000;
const parsedQueries = new BoundedCache<string, ParsedQuery>(MEMO_SIZE);

/*
 * The isolate remembers only what is as short as real lookups are (a hotlink's URL is some
 * 100 characters, nearly every domain under 64): these caches are bounded in count, and so,
 * with their keys bounded too, in memory (some 25 MB at worst, all three full of junk). Junk
 * URLs of up to 16 KB each could otherwise fill an isolate's 128 MB. Anything longer is worked
 * out afresh each time, with the same answer. A refused query keeps only its message: a
 * validation error whole is kilobytes.
 */
const REMEMBERED_URL_LENGTH = 512;
const REMEMBERED_DOMAIN_LENGTH = 64;

type QueryOptions = { success: true; data: LookupOptions } | { success: false; message: string };

interface ParsedQuery {
  options: QueryOptions;
  /** The publishable key of the query, as given. */
  token: string | undefined;
}

function queryOf(kind: Caller["kind"], url: string, query: () => Record<string, string>): ParsedQuery {
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

/**
 * Header values are Latin-1: names travel percent-encoded UTF-8. Made well-formed first: a lone
 * surrogate (half an emoji a site's page or manifest named itself with) has no UTF-8, and
 * encodeURIComponent would throw on it and fail the whole answer.
 */
const headerName = (name: string) => encodeURIComponent(name.toWellFormed());

function metadataHeaders(logo: ResolvedLogo, size: number): Record<string, string> {
  return {
    ...(logo.brandColor ? { "X-Brand-Color": logo.brandColor } : {}),
    "X-Logo-Id": String(logo.logoId),
    "X-Company-Id": String(logo.companyId),
    "X-Company-Name": headerName(logo.companyName),
    "X-Logo-Domain": logo.domain,
    "X-Logo-Variant": logo.variant,
    "X-Logo-Width": String(size),
    "X-Logo-Height": String(scaledHeight(logo.width, logo.height, size)),
    "X-Source-Width": String(logo.width),
    "X-Source-Height": String(logo.height),
  };
}

/** CORS preflight: the key in the URL decides which origin may read the answer. */
async function preflight(c: Context<AppEnv>): Promise<Response> {
  const headers: Record<string, string> = {
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization",
    "Access-Control-Max-Age": "86400",
  };
  // Refused as the request it precedes would be.
  if (carriesSecretKey(c.req.url)) return plainText(SECRET_KEY_IN_URL, 401, ANY_ORIGIN);
  const token = c.req.query("token");
  const key =
    token && keyTypeOf(token) === "publishable"
      ? await verifyAskedKey(createDb(c.env.DB), c.env, c.req.raw, token, (work) => c.executionCtx.waitUntil(work))
      : null;
  // A refused address's preflight passes as an unknown key's does, so that the request it
  // precedes gets a 429 its page can read.
  if (!key || key === "refused") return new Response(null, { status: 204, headers: { ...headers, ...ANY_ORIGIN } });
  const restriction = checkRestrictions(key, c.req.raw.headers);
  if (!restriction.ok) return plainText(restriction.message, 403, restriction.headers);
  return new Response(null, { status: 204, headers: { ...headers, ...restriction.cors } });
}

// Normalising (IDNA, Public Suffix List) is the costliest step of a warm lookup; hotlinked
// domains repeat, so the isolate remembers its answers.
const subjects = new BoundedCache<string, Subject | { invalid: string }>(50_000);

function domainSubject(raw: string): Subject | { invalid: string } {
  const normalise = (): Subject | { invalid: string } => {
    const result = normaliseDomain(raw);
    return result.ok ? { kind: "domain", value: result.domain } : { invalid: "Invalid domain format" };
  };
  return raw.length > REMEMBERED_DOMAIN_LENGTH ? normalise() : subjects.remember(raw, normalise);
}

const TICKER = /^(?:[A-Za-z0-9]{1,12}:)?[A-Za-z0-9.&-]{1,20}$/;

/**
 * What a lookup path names: `/ticker/{t}`, `/name/{n}`, or a domain. Paths with more segments
 * ("github.com/about") are no domains either: the spec's 400, not a 404.
 */
function subjectOf(path: string): Subject | { invalid: string } {
  if (path.startsWith("/ticker/")) {
    const ticker = decodeURIComponentSafe(path.slice("/ticker/".length));
    return TICKER.test(ticker) ? { kind: "ticker", value: ticker.toUpperCase() } : { invalid: "Invalid ticker format" };
  }
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

// One wildcard route per method: Hono then calls the handler directly, without composing a
// chain (a warm redirect is mostly routing; npm run bench).
export const lookupRoutes = new Hono<AppEnv>()
  .options("/*", preflight)
  .on(["GET", "HEAD"], "/*", lookup)
  // A lookup (or asset) URL asked with another method: not "no such logo" (RFC 9110 §15.5.6).
  .on(["POST", "PUT", "PATCH", "DELETE"], "/*", () => plainText("Method not allowed", 405, { Allow: "GET, HEAD, OPTIONS", ...ANY_ORIGIN }));

/** Query parameters, each its first value, as the router's `c.req.query()` gives them. */
function firstValues(search: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(search)) if (!Object.hasOwn(values, name)) values[name] = value;
  return values;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
