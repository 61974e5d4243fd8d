import type { VerifiedKey } from "./verify";

/**
 * What a publishable key allows a browser (spec, Authentication: domain lookup).
 *
 * - Allowed origins: the request's `Origin`, or failing that the origin of its `Referer`,
 *   must be one of the key's origins; CORS then reflects that origin. Keys without origins
 *   answer `Access-Control-Allow-Origin: *`.
 * - Attribution: a key that requires it serves only requests made from a web page, that is,
 *   carrying the page's `Origin` or `Referer`: the page is where the attribution the plan
 *   asks for is shown. Server-side fetches and `referrerpolicy="no-referrer"` embeds, which
 *   name no page, are refused.
 */
export type RestrictionResult =
  | { ok: true; cors: Record<string, string> }
  | { ok: false; message: string; headers: Record<string, string> };

/**
 * The answer of a restricted key depends on both headers it was decided by, so every answer
 * of one (served or refused) says so to shared caches: a logo served to an allowed page must
 * never be served from a cache to another page, nor to a request that names no page.
 */
const DECIDED_BY_PAGE = { Vary: "Origin, Referer" };

export function requestOrigin(headers: Headers): string | null {
  const origin = headers.get("origin");
  if (origin && origin !== "null") return parseOrigin(origin);
  const referer = headers.get("referer");
  return referer ? parseOrigin(referer) : null;
}

function parseOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.origin : null;
  } catch {
    return null;
  }
}

/** Whether the key's answers depend on the page asking (allowed origins, attribution). */
export const isRestricted = (key: Pick<VerifiedKey, "allowedOrigins" | "requireAttribution">) =>
  key.requireAttribution || key.allowedOrigins.length > 0;

/** The CORS of every unrestricted key's answer: one object, so a warm answer can tell it by identity. */
export const ANY_ORIGIN_CORS: Readonly<Record<string, string>> = { "Access-Control-Allow-Origin": "*" };
const UNRESTRICTED: RestrictionResult = { ok: true, cors: ANY_ORIGIN_CORS };

/**
 * What the key allows the page asking. The page's origin is read only for a restricted key:
 * parsing `Referer` on every hotlink would cost the warm lookup more than the rest of it.
 */
export function checkRestrictions(key: VerifiedKey, headers: Headers): RestrictionResult {
  if (!isRestricted(key)) return UNRESTRICTED;
  const origin = requestOrigin(headers);
  if (key.requireAttribution && origin === null) {
    return {
      ok: false,
      message: "Attribution required: this key serves logos only to web pages (no Origin or Referer was sent)",
      headers: DECIDED_BY_PAGE,
    };
  }
  if (key.allowedOrigins.length === 0) {
    return { ok: true, cors: { "Access-Control-Allow-Origin": "*", ...(key.requireAttribution ? DECIDED_BY_PAGE : {}) } };
  }
  if (origin === null || !key.allowedOrigins.includes(origin)) {
    return { ok: false, message: "Origin not allowed for this key", headers: DECIDED_BY_PAGE };
  }
  return { ok: true, cors: { "Access-Control-Allow-Origin": origin, ...DECIDED_BY_PAGE } };
}
