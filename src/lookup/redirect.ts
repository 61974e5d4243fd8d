import type { readVars } from "../env";
import type { ResolvedLogo } from "../catalogue/resolveLogo";
import { lookKey, vectorKey } from "../images/objectKeys";
import { densityWidth, withinHeight } from "../images/transform";
import { ANY_ORIGIN_CORS } from "../keys/restrictions";
import { rateLimitHeaders } from "../lib/responses";
import type { LimitDecision } from "../limits/rateLimiter";
import { type AssetTarget, redirectTarget } from "../images/assetUrls";
import { LOOKUP_CACHE } from "./headers";
import type { LookupOptions } from "./request";

export function redirectResponse(
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
export interface Served extends AssetTarget {
  /** Set when the asked format could not be served: says what was served instead. */
  fallback: Record<string, string>;
}

export function servedAs(logo: ResolvedLogo, options: LookupOptions): Served {
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
