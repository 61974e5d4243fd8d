import type { ResolvedLogo } from "../catalogue/resolveLogo";
import { scaledHeight } from "../images/transform";

/** What every lookup answer carries, whoever asks and however it is answered. */

export const LOOKUP_CACHE = "public, max-age=86400";

export const ANY_ORIGIN = { "Access-Control-Allow-Origin": "*" };

/**
 * A secret key's answers are public (spec: `Cache-Control: public`), which lets a shared cache
 * keep an answer to a request with credentials: it must key it on them, or it would hand the
 * image and the key's headers to a request without any.
 */
export const SECRET_CALLER = { Vary: "Authorization" };

// A page's script reads only the headers CORS exposes: the spec's limits on a lookup answered
// here (bytes, a miss, a refusal). A redirect's own headers never reach a script, which sees
// the answer the redirect leads to; the warm redirect leaves this out.
export const EXPOSED_LIMITS = { "Access-Control-Expose-Headers": "X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After" };

/**
 * Header values are Latin-1: names travel percent-encoded UTF-8. Made well-formed first: a lone
 * surrogate (half an emoji a site's page or manifest named itself with) has no UTF-8, and
 * encodeURIComponent would throw on it and fail the whole answer.
 */
export const headerName = (name: string) => encodeURIComponent(name.toWellFormed());

export function metadataHeaders(logo: ResolvedLogo, size: number): Record<string, string> {
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
